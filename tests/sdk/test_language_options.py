"""Every .proto names its package for the languages whose generators need it (protoc's Go plugin
refuses a file without go_package), with the same values in every file: a bot in Go, Java or C#
generates one package from all of them."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

PROTOS = sorted((Path(__file__).resolve().parents[2] / "proto" / "arena" / "v1").glob("*.proto"))
EXPECTED = {
    "go_package": "arena/v1;arenav1",
    "java_package": "com.arena.v1",
    "java_multiple_files": True,
    "csharp_namespace": "Arena.V1",
}


@pytest.mark.parametrize("proto", PROTOS, ids=[p.name for p in PROTOS])
def test_every_proto_names_its_package_for_go_java_and_csharp(proto: Path) -> None:
    module = importlib.import_module(f"arena.v1.{proto.stem}_pb2")
    described = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
    options = described.options
    for name, value in EXPECTED.items():
        assert options.HasField(name), f"{proto.name} sets no {name}"
        assert getattr(options, name) == value, f"{proto.name}: {name}"
