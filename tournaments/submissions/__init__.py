"""An author's bot as an archive: its manifest (manifest.py), its safe unpacking
(unpacking.py), the hash that names it (content_hash.py), its immutable storage (intake.py:
`accept`), and the author's side, a folder packed the same way every time (packer.py).

Every refusal is one `SubmissionRefused` whose message is one line naming what was wrong, and
leaves nothing stored. docs/contest.md, "Submitting a bot", is the author's and the operator's
page for all of it.
"""
