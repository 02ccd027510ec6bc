"""The referee registers its RPC handlers itself (Play writes pre-encoded decision requests),
so nothing generated would notice an RPC added to the .proto and left without one."""

from __future__ import annotations

from arena.v1 import referee_pb2 as pb

from referee.wire.server import SERVICE_NAME, RefereeServicer, referee_handlers
from referee.wire.sessions import Lobby
from referee.wire.spectators import SpectatorHub


def test_every_rpc_of_the_service_has_a_handler() -> None:
    service = pb.DESCRIPTOR.services_by_name["RefereeService"]
    handlers = referee_handlers(RefereeServicer(Lobby(), SpectatorHub(), 1.0))
    assert set(handlers) == {method.name for method in service.methods}
    assert service.full_name == SERVICE_NAME
    for method in service.methods:
        handler = handlers[method.name]
        assert handler.request_streaming == method.client_streaming
        assert handler.response_streaming == method.server_streaming
