"""Bots as an author uploads them (folders with arena-bot.toml, packed as the CLI packs them),
an upload over real HTTP, and a ladder's uploaded versions as its SQLite file says."""

from __future__ import annotations

import contextlib
import http.client
import json
import sqlite3
from pathlib import Path
from typing import Any

from tournaments.submissions.packer import pack_folder

PLAIN_BOT = """import random
from arena_sdk.bot import Bot


class Plain(Bot):
    name = "plain"

    def act(self, observation, legal_actions):
        return random.randrange(len(legal_actions))
"""

# The C part: a chooser the Python bot asks for each choice (index = seed mod count).
CHOOSER_C = """#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    if (argc != 3) return 2;
    long count = atol(argv[1]), seed = atol(argv[2]);
    printf("%ld\\n", count > 0 ? seed % count : 0);
    return 0;
}
"""
C_BOT = """import os
import random
import subprocess
from arena_sdk.bot import Bot

HERE = os.path.dirname(os.path.abspath(__file__))


class Compiled(Bot):
    name = "compiled"

    def act(self, observation, legal_actions):
        seed = str(random.randrange(1 << 30))
        said = subprocess.run([os.path.join(HERE, "chooser"), str(len(legal_actions)), seed],
                              capture_output=True, text=True, check=True)
        return int(said.stdout)
"""
ILLEGAL_BOT = """from arena_sdk.bot import Bot


class Illegal(Bot):
    name = "illegal"

    def act(self, observation, legal_actions):
        return len(legal_actions) + 7
"""
CRASHING_BOT = """import os
from arena_sdk.bot import Bot


class Crashing(Bot):
    name = "crashing"

    def act(self, observation, legal_actions):
        print("crashing on purpose at my first decision", flush=True)
        os._exit(3)
"""
BROKEN_C = "int main(void) { this is not C }\n"


def bot_folder(where: Path, files: dict[str, str], manifest: str) -> Path:
    where.mkdir(parents=True)
    (where / "arena-bot.toml").write_text(manifest)
    for name, text in files.items():
        (where / name).write_text(text)
    return where


def python_bot(where: Path, source: str = PLAIN_BOT, build: str = "") -> Path:
    return bot_folder(where, {"bot.py": source}, f'python = "bot.py"\n{build}')


def c_bot(where: Path) -> Path:
    build = 'build = ["cc", "-O2", "-o", "chooser", "chooser.c"]\n'
    return bot_folder(
        where, {"bot.py": C_BOT, "chooser.c": CHOOSER_C}, f'python = "bot.py"\n{build}'
    )


def upload(
    base: str, token: str | None, name: str, data: bytes, length: int | None = None
) -> tuple[int, dict[str, Any]]:
    """POST the archive to /api/bots/NAME/versions; (status, JSON body)."""
    host, port = base.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        connection.putrequest("POST", f"/api/bots/{name}/versions")
        if token is not None:
            connection.putheader("Authorization", f"Bearer {token}")
        connection.putheader("Content-Type", "application/octet-stream")
        connection.putheader("Content-Length", str(len(data) if length is None else length))
        connection.endheaders()
        # Refused before the body was read whole: the answer is there all the same.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            connection.send(data)
        answer = connection.getresponse()
        text = answer.read().decode()
        return answer.status, json.loads(text) if text.startswith("{") else {"text": text}
    finally:
        connection.close()


def packed(folder: Path) -> bytes:
    return pack_folder(folder)


def version_rows(folder: Path) -> dict[str, tuple[str, str]]:
    """Each uploaded version's key -> (status, reason)."""
    path = folder / "ladder.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT key, status, reason FROM versions WHERE content_hash IS NOT NULL"
        ).fetchall()
    return {str(k): (str(s), str(r)) for k, s, r in rows}


def stored(folder: Path) -> list[str]:
    """What the ladder's versions folder holds."""
    versions = folder / "versions"
    return sorted(p.name for p in versions.iterdir()) if versions.is_dir() else []
