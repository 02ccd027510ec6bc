"""Every file and folder the referee, tournaments and the ladder write is their owner's alone.

SQLite databases (the deal secret), TOML files (tokens), replays, logs and socket folders are
created 0600 and 0700 from their first byte by a umask set where each process that writes
state begins: the `arena` command, a cores executor's referee process, a Dask worker's task.
A chmod after the fact would leave a moment in which another user (a bot at tier rlimits, as
a uid of its own) could open the file and keep it open. What is shared on purpose (a series'
socket folder, for its bots' group) is given its modes explicitly.
"""

from __future__ import annotations

import os

# Group and others get nothing: what this process creates is its user's alone.
PRIVATE_UMASK = 0o077


def keep_state_private() -> None:
    """From here on, this process and what it starts create files for their owner only."""
    os.umask(PRIVATE_UMASK)
