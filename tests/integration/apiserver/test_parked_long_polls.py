"""The agents' long-poll answered below the ASGI app (routes/long_polls.py): only a long-poll
whose token the cache has authorized takes that way, and it answers, counts, stops and hangs up
as the ASGI route does."""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.apiserver_http.serving.http_protocol import BoundedHttpProtocol
from brupop.adapters.apiserver_http.serving.server import RunningServer, serve_in_thread
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.shadow import Shadow, ShadowSpec, shadow_name
from brupop.domain.states import UpdateState
from brupop.entrypoints.apiserver.container import ApiserverContainer, apiserver_container
from tests.integration.apiserver.conftest import NS, add_agent_nodes, agent_pod
from tests.support.polling import wait_until
from tests.support.tls import TestCertificates

NODE = "n1"
RESOURCE = "/bottlerocket-node-resource"


@dataclass
class Lane:
    """A served app, its cluster, its container (the services under it), and the app's
    long-poll lane."""

    cluster: InMemoryCluster
    server: RunningServer
    app: Any
    container: ApiserverContainer
    ca_path: str
    token: str

    @property
    def answered(self) -> int:
        """Long-polls the lane answered."""
        count: int = self.app.state.long_polls.answered
        return count

    def shadow(self) -> Shadow:
        return self.cluster.shadows.get(shadow_name(NODE))

    def change_shadow(self) -> Shadow:
        spec = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.1.0")
        return self.cluster.shadows.replace_spec(shadow_name(NODE), spec, None)

    def requests(self, status: str) -> float:
        """The GETs of the shadow's route counted with `status`."""
        value = self.container.metrics().registry.get_sample_value(
            "brupop_apiserver_requests_total",
            {"route": RESOURCE, "method": "GET", "status": status},
        )
        return value or 0.0

    def connect(self) -> ssl.SSLSocket:
        context = ssl.create_default_context(cafile=self.ca_path)
        raw = socket.create_connection(("127.0.0.1", self.server.port), timeout=10)
        return context.wrap_socket(raw, server_hostname="localhost")

    def request(self, query: str, *, token: str | None = None) -> bytes:
        return (
            f"GET {RESOURCE}{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"BrupopNodeName: {NODE}\r\nBrupopNodeUid: uid-{NODE}\r\n"
            f"BrupopK8sAuthToken: {token or self.token}\r\n\r\n"
        ).encode()

    def wait_query(self, version: str | None) -> str:
        return f"?timeoutSeconds=30&resourceVersion={version}"


@pytest.fixture
def lane(certs: TestCertificates) -> Iterator[Lane]:
    cluster = InMemoryCluster(NS)
    add_agent_nodes(cluster)
    cluster.shadows.create(NODE, f"uid-{NODE}")
    container = apiserver_container(
        cluster=cluster, options=ApiserverOptions(namespace=NS, feed_watch_seconds=0.5)
    )
    app = container.app()
    server = serve_in_thread(
        app, certfile=certs.cert_path, keyfile=certs.key_path, cert_check_seconds=0.0
    )
    token = cluster.issue_token(NS, agent_pod(NODE))
    try:
        wait_until(lambda: container.feed().ready, "the feed listed", seconds=10)
        yield Lane(cluster, server, app, container, str(certs.ca_path), token)
    finally:
        server.stop()


def read_answer(connection: ssl.SSLSocket, pending: bytearray) -> tuple[int, bytes, bytes]:
    """One answer off the connection (status, head, body); what follows stays in `pending`."""
    while b"\r\n\r\n" not in pending:
        chunk = connection.recv(65536)
        assert chunk, "the connection closed before an answer"
        pending += chunk
    head, _, rest = bytes(pending).partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(rest) < length:
        chunk = connection.recv(65536)
        assert chunk, "the connection closed in an answer's body"
        rest += chunk
    pending[:] = rest[length:]
    return int(head.split(b" ", 2)[1]), head.lower(), rest[:length]


def cache_the_token(lane: Lane, connection: ssl.SSLSocket, pending: bytearray) -> None:
    """A read of the shadow: its token is reviewed (the ASGI way) and cached."""
    connection.sendall(lane.request(""))
    status, _, _ = read_answer(connection, pending)
    assert status == 200
    assert lane.answered == 0


def park_a_long_poll(lane: Lane, connection: ssl.SSLSocket, pending: bytearray) -> Shadow:
    """The token cached, a long-poll at the shadow's version, waiting: the shadow it waits on."""
    cache_the_token(lane, connection, pending)
    current = lane.shadow()
    connection.sendall(lane.request(lane.wait_query(current.resource_version)))
    wait_until(lambda: lane.container.feed().waiting() == 1, "the poll waits")
    return current


def test_a_long_poll_whose_token_is_cached_waits_below_the_app_and_gets_the_change(
    lane: Lane,
) -> None:
    pending = bytearray()
    with lane.connect() as connection:
        park_a_long_poll(lane, connection, pending)
        written = lane.change_shadow()
        status, head, body = read_answer(connection, pending)

    assert status == 200
    assert b"content-type: application/json" in head
    assert json.loads(body)["metadata"]["resourceVersion"] == written.resource_version
    assert json.loads(body)["spec"]["version"] == "1.1.0"
    assert lane.answered == 1
    assert lane.requests("200") == 2


def test_a_long_poll_with_a_token_not_yet_reviewed_goes_the_asgi_way(lane: Lane) -> None:
    pending = bytearray()
    with lane.connect() as connection:
        connection.sendall(lane.request("?timeoutSeconds=30"))  # no version: answered at once
        status, _, body = read_answer(connection, pending)

    assert status == 200
    assert json.loads(body)["metadata"]["name"] == shadow_name(NODE)
    assert lane.answered == 0


@pytest.mark.parametrize(
    "query",
    [
        "?timeoutSeconds=abc",
        "?timeoutSeconds=30&resourceVersion=bad%20version",
        "?timeoutSeconds=-1",
    ],
)
def test_a_bad_wait_parameter_from_a_cached_caller_is_refused_as_before(
    lane: Lane, query: str
) -> None:
    pending = bytearray()
    with lane.connect() as connection:
        cache_the_token(lane, connection, pending)
        connection.sendall(lane.request(query))
        status, _, body = read_answer(connection, pending)

    assert status == 400
    assert "error" in json.loads(body)
    assert lane.answered == 0


def test_a_request_sent_behind_a_parked_long_poll_is_answered_after_it(lane: Lane) -> None:
    pending = bytearray()
    with lane.connect() as connection:
        park_a_long_poll(lane, connection, pending)
        connection.sendall(b"GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        written = lane.change_shadow()
        first = read_answer(connection, pending)
        second = read_answer(connection, pending)

    assert json.loads(first[2])["metadata"]["resourceVersion"] == written.resource_version
    assert second[0] == 200
    assert second[2] == b"pong"


def test_the_shutdown_answers_a_parked_long_poll_at_once_and_closes_its_connection(
    lane: Lane,
) -> None:
    pending = bytearray()
    with lane.connect() as connection:
        current = park_a_long_poll(lane, connection, pending)
        lane.app.state.begin_shutdown()
        status, head, body = read_answer(connection, pending)
        after = connection.recv(1)

    assert status == 200
    assert b"connection: close" in head
    assert json.loads(body)["metadata"]["resourceVersion"] == current.resource_version
    assert after == b""  # the server closed the connection
    assert lane.answered == 1


def test_a_client_hanging_up_ends_its_parked_long_poll(lane: Lane) -> None:
    pending = bytearray()
    with lane.connect() as connection:
        park_a_long_poll(lane, connection, pending)

    wait_until(lambda: lane.container.feed().waiting() == 0, "the wait ended")
    wait_until(lambda: lane.requests("499") == 1, "the hang-up counted as 499")
    assert lane.answered == 1


def test_a_parked_long_poll_keeps_none_of_its_request_head_while_it_waits(lane: Lane) -> None:
    pending = bytearray()
    with lane.connect() as connection:
        park_a_long_poll(lane, connection, pending)
        (protocol,) = list(lane.server.server.server_state.connections)
        assert isinstance(protocol, BoundedHttpProtocol)
        # Read from the test's thread while the event loop waits in select: these are plain
        # attributes, and the lane set them before the poll counted as waiting.
        held: tuple[object, ...] = (protocol.url, protocol.headers, protocol.scope)
        lane.change_shadow()
        status, _, _ = read_answer(connection, pending)

    assert held == (b"", [], None)  # not the token, not the scope
    assert status == 200
