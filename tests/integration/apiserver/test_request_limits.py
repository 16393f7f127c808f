"""Request heads are bounded in size (431) and time (408), so that a client without a token
cannot fill the apiserver's memory or hold its connections open with a slow head."""

from __future__ import annotations

import ssl

import pytest

from brupop.adapters.apiserver_http.routes import requests
from brupop.adapters.apiserver_http.serving.http_protocol import HeadLimits
from brupop.adapters.apiserver_http.serving.server import ServerLimits
from tests.integration.apiserver.conftest import NS, RigFactory, agent_pod
from tests.integration.apiserver.raw_client import read_until_closed, send_all, tls_connection
from tests.support.trickling_client import trickle_until_closed


def _headers(total_bytes: int) -> bytes:
    line = b"X-Filler: " + b"a" * 1000 + b"\r\n"
    return line * (total_bytes // len(line))


def test_a_request_head_over_64_kib_is_answered_431_and_closed(make_rig: RigFactory) -> None:
    rig = make_rig()
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        send_all(connection, b"GET /ping HTTP/1.1\r\nHost: localhost\r\n" + _headers(1024 * 1024))
        send_all(connection, b"\r\n")
        answer = read_until_closed(connection)

    assert answer.startswith(b"HTTP/1.1 431 ")


def test_a_request_head_under_the_limit_is_served(make_rig: RigFactory) -> None:
    rig = make_rig()
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        head = b"GET /ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        connection.sendall(head + _headers(48 * 1024) + b"\r\n")
        answer = read_until_closed(connection)

    assert answer.startswith(b"HTTP/1.1 200 ")
    assert answer.endswith(b"pong")


def test_a_request_head_sent_too_slowly_is_answered_408_and_closed(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(limits=ServerLimits(head=HeadLimits(header_timeout_seconds=0.5)))
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        connection.sendall(b"GET /ping HTTP/1.1\r\nHost: loc")
        answer = read_until_closed(connection)

    assert answer.startswith(b"HTTP/1.1 408 ")


def test_a_next_request_head_sent_too_slowly_on_a_kept_alive_connection_is_answered_408(
    make_rig: RigFactory,
) -> None:
    """The deadline starts again with each request's head, not only with the connection's."""
    rig = make_rig(limits=ServerLimits(head=HeadLimits(header_timeout_seconds=0.5)))
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        connection.sendall(b"GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
        first = b""
        while not first.endswith(b"pong"):
            first += connection.recv(4096)
        connection.sendall(b"GET /ping HTTP/1.1\r\nHost: loc")
        answer = read_until_closed(connection)

    assert first.startswith(b"HTTP/1.1 200 ")
    assert answer.startswith(b"HTTP/1.1 408 ")


def test_a_connection_that_sends_no_request_is_closed_after_the_header_timeout(
    make_rig: RigFactory,
) -> None:
    rig = make_rig(limits=ServerLimits(head=HeadLimits(header_timeout_seconds=0.5)))
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        assert read_until_closed(connection) == b""


def test_a_slow_head_deadline_does_not_cut_a_long_poll(make_rig: RigFactory) -> None:
    """The deadline covers the head only: an answer may take longer than it."""
    rig = make_rig(limits=ServerLimits(head=HeadLimits(header_timeout_seconds=1.0)))
    client = rig.client("n1")
    version = client.create().resource_version

    unchanged = client.wait_for_change(version, timeout_seconds=2.5)

    assert unchanged is not None and unchanged.resource_version == version


def test_an_oversized_body_is_answered_413_before_any_token_review(make_rig: RigFactory) -> None:
    rig = make_rig()
    head = (
        b"PUT /bottlerocket-node-resource?view=shadow HTTP/1.1\r\nHost: localhost\r\n"
        b"BrupopNodeName: n1\r\nBrupopNodeUid: uid-n1\r\nBrupopK8sAuthToken: not-a-token\r\n"
        b"Content-Length: 10000000\r\nConnection: close\r\n\r\n"
    )
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        connection.sendall(head)
        answer = read_until_closed(connection)

    assert answer.startswith(b"HTTP/1.1 413 ")
    assert rig.cluster.token_reviewer.review_count == 0


REFUSED_PUT = (
    b"PUT /bottlerocket-node-resource HTTP/1.1\r\nHost: localhost\r\n"
    b"BrupopNodeName: n1\r\nBrupopNodeUid: uid-n1\r\nBrupopK8sAuthToken: not-a-token\r\n"
    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
)


def test_a_refused_request_whose_body_trickles_in_is_closed_at_the_head_deadline(
    make_rig: RigFactory,
) -> None:
    """Its answer is complete before its body: the rest of the body must come within the
    head's deadline, not whenever the client likes."""
    rig = make_rig(limits=ServerLimits(head=HeadLimits(header_timeout_seconds=0.5)))
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        connection.sendall(REFUSED_PUT % 60000 + b"{")
        answer, sent = trickle_until_closed(connection, b" " * 600)  # a byte each 0.05 s

    assert answer.startswith(b"HTTP/1.1 401 ")
    assert sent < 600  # closed well before the 30 s the trickle would take


def test_a_refused_request_whose_body_comes_after_its_answer_keeps_its_connection(
    make_rig: RigFactory,
) -> None:
    rig = make_rig()
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        connection.sendall(REFUSED_PUT % 2)
        refused = _one_answer(connection)
        connection.sendall(b"{}" + b"GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
        ping = _one_answer(connection)

    assert refused.startswith(b"HTTP/1.1 401 ")
    assert ping.startswith(b"HTTP/1.1 200 ") and ping.endswith(b"pong")


def _one_answer(connection: ssl.SSLSocket) -> bytes:
    """One whole answer (its Content-Length read) from a connection that stays open."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += connection.recv(65536)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
    while len(body) < length:
        body += connection.recv(65536)
    return head + b"\r\n\r\n" + body


def test_an_agents_status_body_that_trickles_in_is_answered_408(
    make_rig: RigFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(requests, "BODY_SECONDS", 0.5)
    rig = make_rig()
    rig.client("n1").create()
    token = rig.cluster.issue_token(NS, agent_pod("n1"))
    head = (
        b"PUT /bottlerocket-node-resource HTTP/1.1\r\nHost: localhost\r\n"
        b"BrupopNodeName: n1\r\nBrupopNodeUid: uid-n1\r\nBrupopK8sAuthToken: %s\r\n"
        b"Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{"
    ) % token.encode()
    with tls_connection(rig.server.port, rig.certs.ca_path) as connection:
        connection.sendall(head)
        answer, sent = trickle_until_closed(connection, b" " * 600)  # a byte each 0.05 s

    assert answer.startswith(b"HTTP/1.1 408 "), answer[:80]
    assert sent < 600
