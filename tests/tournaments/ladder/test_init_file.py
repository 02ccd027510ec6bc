"""`arena ladder init` writes [authors] and [submissions] (with [submissions.build]) where an
organiser finds them: every key of them in the file, the ones commented out at their default,
and what it wrote loads back as the defaults; uncommenting a key changes it (the control: the
commented lines are read as the keys they name, not as prose)."""

from __future__ import annotations

from pathlib import Path

from referee.bots.builds import BuildLimits
from tests.tournaments.web.harness import arena
from tournaments.ladder.config_file import Authors, Submissions, load_ladder


def test_init_writes_authors_and_submissions_at_their_defaults(tmp_path: Path) -> None:
    folder = tmp_path / "ladder"
    made = arena("ladder", "init", folder, "--game", "opposing-force")
    assert made.returncode == 0, made.stderr
    path = folder / "ladder.toml"
    text = path.read_text()
    for table in ("[authors]", "[submissions]", "[submissions.build]"):
        assert f"\n{table}" in text, table
    for model in (Authors, Submissions, BuildLimits):
        for key in model.model_fields:
            assert f"\n{key} = " in text or f"\n# {key} = " in text or key == "build", key
    config = load_ladder(folder)
    assert config.authors == Authors() and config.submissions == Submissions()

    uncommented = text.replace("# unpacked_mb = 50", "unpacked_mb = 7").replace(
        "# wall_seconds = 300", "wall_seconds = 30"
    )
    path.write_text(uncommented)
    changed = load_ladder(folder)
    assert changed.submissions.unpacked_mb == 7 and changed.submissions.build.wall_seconds == 30
