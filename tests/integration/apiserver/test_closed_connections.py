"""A closed connection's objects (its HTTP protocol, TLS state and socket transport) are freed
as it closes, by reference counting, however it closed: no cycle keeps them for the collector,
which after a storm of reconnecting agents held a thousand connections' worth."""

from __future__ import annotations

import gc
import socket
import struct
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.apiserver.conftest import RigFactory
from tests.integration.apiserver.raw_client import ping_on, tls_connection
from tests.support.polling import wait_until


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _ping_then_close(make_rig: RigFactory, *, reset: bool) -> dict[str, weakref.ref[Any]]:
    """Weak references to the server's objects for one connection that answered a ping (its
    keep-alive timer armed) and was then closed by the client, with a reset or cleanly."""
    rig = make_rig()
    connections = rig.server.server.server_state.connections
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        ping_on(connection)
        wait_until(lambda: len(connections) == 1, "the connection to be open")
        protocol: Any = next(iter(connections))
        tls = protocol.transport._ssl_protocol
        objects = {"http": weakref.ref(protocol), "tls": weakref.ref(tls)}
        objects["socket transport"] = weakref.ref(tls._transport)
        del protocol, tls
        if reset:
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    wait_until(lambda: not connections, "the server to see the connection closed")
    return objects


@pytest.mark.usefixtures("collector_off")
@pytest.mark.parametrize("reset", [True, False], ids=["reset", "closed"])
def test_a_closed_connections_objects_are_freed_without_the_collector(
    make_rig: RigFactory, reset: bool
) -> None:
    objects = _ping_then_close(make_rig, reset=reset)

    wait_until(
        lambda: all(ref() is None for ref in objects.values()),
        "the connection's objects to be freed",
    )
    assert gc.isenabled() is False
