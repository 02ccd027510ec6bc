"""The SDK is installable on its own: it imports nothing of the referee, and a fresh
interpreter that can see only the SDK's folder runs a bot class from it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SDK = Path(__file__).resolve().parents[2] / "sdk"
ALLOWED = {"arena", "arena_sdk", "grpc", "google", "__future__"}


def test_sdk_imports_only_grpc_protobuf_and_the_standard_library() -> None:
    stdlib = set(sys.stdlib_module_names)
    for source in (SDK / "arena_sdk").glob("*.py"):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top in ALLOWED or top in stdlib, f"{source.name} imports {name}"


def test_a_bot_loads_with_only_the_sdk_on_the_path(tmp_path: Path) -> None:
    bot = tmp_path / "mybot.py"
    bot.write_text(
        "from arena_sdk import Bot\n\n"
        "class First(Bot):\n"
        "    def act(self, observation, legal_actions):\n"
        "        return 0\n"
    )
    code = (
        "import sys; from arena_sdk.launch import load_bot_class;"
        f"cls = load_bot_class({str(bot)!r}); print(cls.__name__);"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('referee', 'example_bots')))"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path[:0] = [{str(SDK)!r}]; {code}"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[:2] == ["First", "[]"]
