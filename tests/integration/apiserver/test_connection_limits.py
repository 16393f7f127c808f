"""Connections are bounded in number and in how long their TLS handshake may take."""

from __future__ import annotations

import contextlib

from brupop.adapters.apiserver_http.serving.admission import ConnectionLimits
from brupop.adapters.apiserver_http.serving.server import ServerLimits
from tests.integration.apiserver.conftest import RigFactory
from tests.integration.apiserver.raw_client import ping_soon, read_until_closed, tcp_connection


def test_a_connection_that_never_starts_tls_is_closed_after_the_handshake_timeout(
    make_rig: RigFactory,
) -> None:
    limits = ServerLimits(connections=ConnectionLimits(handshake_timeout_seconds=0.3))
    rig = make_rig(limits=limits)
    with tcp_connection(rig.server.port) as connection:
        assert read_until_closed(connection, timeout=10) == b""


def test_a_tls_handshake_that_stalls_is_closed_after_the_handshake_timeout(
    make_rig: RigFactory,
) -> None:
    limits = ServerLimits(connections=ConnectionLimits(handshake_timeout_seconds=0.3))
    rig = make_rig(limits=limits)
    with tcp_connection(rig.server.port) as connection:
        connection.sendall(b"\x16\x03\x01\x02\x00")  # the start of a ClientHello record
        assert read_until_closed(connection, timeout=10) == b""


def test_connections_over_the_limit_are_refused_until_others_close(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(limits=ServerLimits(connections=ConnectionLimits(max_connections=3)))
    with contextlib.ExitStack() as held:
        for _ in range(3):
            held.enter_context(tcp_connection(rig.server.port))
        with tcp_connection(rig.server.port) as over:
            assert read_until_closed(over, timeout=10) == b""

    assert ping_soon(rig.server.port, rig.certs.ca_path) == b"pong"
