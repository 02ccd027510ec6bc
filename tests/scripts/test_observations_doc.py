"""Tests scripts/observations_doc.py: docs/observations.md is what the script writes from the
.proto files and the engines now, every field of the messages it documents has a description,
and each worked example is a real request that reads back as one."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest
from arena.v1 import referee_pb2 as pb
from google.protobuf import json_format

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "observations_doc.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("observations_doc", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["observations_doc"] = module
    spec.loader.exec_module(module)
    return module


def test_the_file_on_disk_is_what_the_script_writes_now(script: ModuleType) -> None:
    assert script.undocumented(script.read_protos()) == []
    assert script.DOC.read_text(encoding="utf-8") == script.document(), (
        "docs/observations.md is out of date: run `make docs`"
    )
    assert script.main(["--check"]) == 0


def test_control_a_stale_file_fails_the_check(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = tmp_path / "observations.md"
    stale.write_text(script.DOC.read_text(encoding="utf-8").replace("A = 14", "A = 1"))
    monkeypatch.setattr(script, "DOC", stale)
    assert script.main(["--check"]) == 1


def with_new_field(tmp_path: Path, comment: str) -> Path:
    """A copy of proto/ whose Opposing Force observation has one more field."""
    copy = tmp_path / "proto"
    shutil.copytree(SCRIPT.parents[1] / "proto", copy)
    path = copy / "arena" / "v1" / "opposing_force.proto"
    text = path.read_text()
    field = (
        f"  {comment}\n  uint32 reinforcements = 99;\n"
        if comment
        else "  uint32 reinforcements = 99;\n"
    )
    text = text.replace("  uint32 decision_cap = 10;\n", "  uint32 decision_cap = 10;\n" + field)
    path.write_text(text)
    return copy


def test_a_field_added_without_a_comment_fails(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(script, "PROTO", with_new_field(tmp_path, ""))
    assert script.undocumented(script.read_protos()) == ["OpposingForceObservation.reinforcements"]
    assert script.main(["--check"]) == 1


def test_control_the_same_field_with_its_comment_is_documented(
    script: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(script, "PROTO", with_new_field(tmp_path, "// Cards held back."))
    assert script.undocumented(script.read_protos()) == []
    assert "| `reinforcements` | 99 | uint32 | Cards held back. |" in script.document()


def test_every_game_has_a_real_request_that_reads_back(script: ModuleType) -> None:
    text = script.DOC.read_text(encoding="utf-8")
    examples = re.findall(r"```json\n(.*?)\n```", text, flags=re.DOTALL)
    assert len(examples) == len(script.GAME_FIELDS)
    for game_field, example in zip(script.GAME_FIELDS, examples, strict=True):
        request = json_format.Parse(example, pb.DecisionRequest())
        assert request.observation.WhichOneof("game") == game_field
        assert request.legal_actions, game_field
        for index, legal in enumerate(request.legal_actions):
            assert legal.index == index and legal.action.WhichOneof("game") == game_field
        assert all(e.WhichOneof("game") == game_field for e in request.events)


def test_the_card_encoding_is_stated() -> None:
    text = (SCRIPT.parents[1] / "docs" / "observations.md").read_text(encoding="utf-8")
    assert "**A = 14**" in text
    assert "| `SUIT_SPADES` | 4 |" in text
