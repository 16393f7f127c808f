"""Budgets per client on the real server over loopback: each listener has its own connections, one
source address holds only its share of them, probes have a reserve, and one node holds at most
two long-polls.

Attackers connect from 127.0.0.2 and up (loopback addresses that are not the server's own host,
which is not counted per address: simulate runs every agent there)."""

from __future__ import annotations

import contextlib
import functools
import socket
import ssl
import threading
from collections.abc import Iterator

import pytest

from brupop.adapters.apiserver_http.serving.admission import ConnectionLimits
from brupop.adapters.apiserver_http.serving.server import ServerLimits
from tests.integration.apiserver.conftest import (
    NS,
    Rig,
    RigFactory,
    agent_pod,
    open_connections,
)
from tests.integration.apiserver.raw_client import read_until_closed, tcp_connection, tls_connection
from tests.support.polling import wait_until
from tests.support.ports import free_port

LIMITS = ConnectionLimits(
    max_connections=6, webhook_max_connections=6, per_address=3, probe_reserve=2
)


def silent(stack: contextlib.ExitStack, port: int, source: str, count: int) -> list[socket.socket]:
    """`count` TCP connections from `source` that never start TLS, closed with `stack`."""
    return [stack.enter_context(tcp_connection(port, source=source)) for _ in range(count)]


def get(port: int, rig: Rig, path: str, source: str = "127.0.0.1", **headers: str) -> bytes:
    """`GET path` on a new connection from `source`: the whole answer, or b"" if hung up."""
    try:
        with tls_connection(port, rig.certs.ca_path, source=source) as connection:
            lines = [f"GET {path} HTTP/1.1", "Host: localhost", "Connection: close"]
            lines += [f"{name}: {value}" for name, value in headers.items()]
            connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
            return read_until_closed(connection)
    except (OSError, ssl.SSLError):
        return b""


def agent_headers(rig: Rig, node: str) -> dict[str, str]:
    token = rig.cluster.issue_token(NS, agent_pod(node))
    return {"BrupopNodeName": node, "BrupopNodeUid": f"uid-{node}", "BrupopK8sAuthToken": token}


@pytest.fixture
def two_ports(make_rig: RigFactory) -> Rig:
    return make_rig(limits=ServerLimits(connections=LIMITS), webhook_port=free_port())


def test_silent_connections_filling_the_webhook_port_leave_agents_and_ping_served(
    two_ports: Rig,
) -> None:
    rig = two_ports
    webhook = rig.server.webhook_port
    assert webhook is not None
    rig.client("n1").create()
    with contextlib.ExitStack() as flood:
        for source in ("127.0.0.2", "127.0.0.3"):
            silent(flood, webhook, source, 5)  # 3 each held, the rest hung up
        wait_until(lambda: open_connections(rig, "webhook") == 6, "the webhook port is full")

        assert rig.client("n1").get() is not None  # the agents' port has its own slots
        assert get(rig.server.port, rig, "/ping").endswith(b"pong")
        # The kubelet's probe on the full webhook port is served from its reserve.
        assert get(webhook, rig, "/ping").endswith(b"pong")
        assert get(webhook, rig, "/readyz").startswith(b"HTTP/1.1 200")


def test_one_address_cannot_take_all_of_a_listeners_connections(make_rig: RigFactory) -> None:
    rig = make_rig(limits=ServerLimits(connections=LIMITS))
    with contextlib.ExitStack() as flood:
        connections = silent(flood, rig.server.port, "127.0.0.2", 6)
        wait_until(lambda: open_connections(rig, "agents") == 3, "the address's share is held")
        hung_up = sum(_closed_by_server(connection) for connection in connections)

        assert hung_up == 3
        assert get(rig.server.port, rig, "/ping", source="127.0.0.3").endswith(b"pong")
        answer = get(rig.server.port, rig, "/bottlerocket-node-resource/node-uid",
                     source="127.0.0.5", **agent_headers(rig, "n1"))  # fmt: skip
        assert answer.startswith(b"HTTP/1.1 200")


def test_a_full_listener_serves_only_probes_from_its_reserve(make_rig: RigFactory) -> None:
    rig = make_rig(limits=ServerLimits(connections=LIMITS))
    with contextlib.ExitStack() as flood:
        silent(flood, rig.server.port, "127.0.0.2", 3)
        silent(flood, rig.server.port, "127.0.0.3", 3)
        wait_until(lambda: open_connections(rig, "agents") == 6, "the agents' port is full")

        assert get(rig.server.port, rig, "/ping", source="127.0.0.4").endswith(b"pong")
        answer = get(rig.server.port, rig, "/bottlerocket-node-resource/node-uid",
                     source="127.0.0.4", **agent_headers(rig, "n1"))  # fmt: skip
        assert answer.startswith(b"HTTP/1.1 503")
        assert b"only probes" in answer


def _closed_by_server(connection: socket.socket) -> bool:
    """Whether the server hung up on `connection` (it never sent anything on it)."""
    try:
        return read_until_closed(connection, timeout=0.5) == b""
    except TimeoutError:
        return False


class LongPoll:
    """One long-poll of `node` at its shadow's version, on its own connection and thread."""

    def __init__(self, rig: Rig, node: str, version: str) -> None:
        headers = agent_headers(rig, node)
        path = f"/bottlerocket-node-resource?resourceVersion={version}&timeoutSeconds=55"
        self.answer: bytes | None = None
        self._thread = threading.Thread(target=self._run, args=(rig, path, headers), daemon=True)
        self._thread.start()

    def _run(self, rig: Rig, path: str, headers: dict[str, str]) -> None:
        self.answer = get(rig.server.port, rig, path, **headers)

    @property
    def answered(self) -> bool:
        return self.answer is not None

    def join(self) -> None:
        self._thread.join(30)


@pytest.fixture
def polls(rig: Rig) -> Iterator[list[LongPoll]]:
    started: list[LongPoll] = []
    yield started
    rig.stop()  # the shutdown answers the waits still open
    for poll in started:
        poll.join()


def test_a_third_long_poll_of_one_node_ends_the_oldest(rig: Rig, polls: list[LongPoll]) -> None:
    version = rig.client("n1").create().resource_version
    assert version is not None
    wait_until(lambda: rig.feed.ready, "the feed has listed")
    for count in (1, 2, 3):
        polls.append(LongPoll(rig, "n1", version))
        wait_until(functools.partial(_waits_reach, rig, polls, count), f"{count} waits")

    wait_until(lambda: polls[0].answered, "the oldest wait is answered")
    answer = polls[0].answer or b""
    assert answer.startswith(b"HTTP/1.1 200")
    assert version.encode() in answer  # answered as a wait cut short: unchanged
    assert not polls[1].answered and not polls[2].answered
    assert rig.feed.waiting() == 2


def _waits_reach(rig: Rig, polls: list[LongPoll], count: int) -> bool:
    """The server holds `count` waits (or has answered the first, when a third ended it)."""
    return rig.feed.waiting() == count or polls[0].answered
