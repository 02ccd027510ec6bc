"""The arena's referee: rules engines, match runner, replays and the gRPC server."""
