"""An open connection keeps its queues in lists, not deques (an empty deque holds a 64-slot
block: 760 bytes against 56, for each of thousands of waiting agents), and requests sent back
to back on one connection still go through uvicorn's queue and are answered in order."""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from tests.integration.apiserver.conftest import RigFactory
from tests.integration.apiserver.raw_client import ping_on, read_until_closed, tls_connection
from tests.support.polling import wait_until

PING = b"GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n"


def _queues(protocol: Any) -> list[object]:
    tls = protocol.transport._ssl_protocol
    return [protocol.pipeline, protocol.flow._is_writable_event._waiters, tls._write_backlog]


def test_an_open_connection_holds_no_deque_for_its_queues(make_rig: RigFactory) -> None:
    rig = make_rig()
    connections = rig.server.server.server_state.connections
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        answer = ping_on(connection)
        wait_until(lambda: len(connections) == 1, "the connection to be open")
        (protocol,) = list(connections)
        queues = _queues(protocol)

    assert answer.startswith(b"HTTP/1.1 200 ")
    assert [type(queue) for queue in queues if isinstance(queue, deque)] == []
    assert all(isinstance(queue, list) for queue in queues)


def test_requests_sent_back_to_back_on_one_connection_are_answered_in_order(
    make_rig: RigFactory,
) -> None:
    rig = make_rig()
    closing = b"GET /nowhere HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        connection.sendall(PING + PING + closing)  # the second and third come in flight
        answer = read_until_closed(connection)

    assert re.findall(rb"HTTP/1\.1 (\d{3}) ", answer) == [b"200", b"200", b"404"]
    assert answer.count(b"pong") == 2
