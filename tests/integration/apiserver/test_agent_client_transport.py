"""The agent's HTTPS transport keeps its guarantees: whom it trusts, how long it waits, how much
it reads, and how it reuses connections."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from brupop.adapters.apiserver_client import ApiserverClient, RetrySchedule
from brupop.adapters.apiserver_client.transport import MAX_RESPONSE_BYTES, HttpsTransport
from brupop.ports.errors import UnavailableError
from tests.integration.apiserver.conftest import NS, Rig, agent_pod
from tests.support.raw_https import (
    Handler,
    RawHttpsServer,
    answer,
    hold_until_closed,
    read_request,
)
from tests.support.tls import TestCertificates, make_certificates

NO_RETRY = RetrySchedule(retries=0)


def transport(url: str, ca_path: Path, tmp_path: Path, sleeps: list[float]) -> HttpsTransport:
    token = tmp_path / "token"
    token.write_text("a-token")
    return HttpsTransport(
        base_url=url,
        node_name="n1",
        token_path=token,
        ca_path=ca_path,
        retry=RetrySchedule(retries=2, base_seconds=0.01, cap_seconds=0.02),
        sleep=sleeps.append,
    )


ServerFactory = Callable[..., RawHttpsServer]


@pytest.fixture
def serve(certs: TestCertificates) -> Iterator[ServerFactory]:
    """Start raw servers with the session's certificates; all are closed after the test."""
    started: list[RawHttpsServer] = []

    def start(handle: Handler, **options: Any) -> RawHttpsServer:
        server = RawHttpsServer(certs, handle, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def test_only_the_configured_ca_is_trusted_not_the_system_bundle(
    rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The system bundle (here pointed at the CA that did sign the server) must not count: the
    # agent trusts its configured CA file, which did not.
    monkeypatch.setenv("SSL_CERT_FILE", str(rig.certs.ca_path))
    stranger = make_certificates(tmp_path / "other-ca")
    token = tmp_path / "token"
    token.write_text(rig.cluster.issue_token(NS, agent_pod("n1")))
    client = ApiserverClient(
        base_url=rig.server.base_url,
        node_name="n1",
        token_path=token,
        ca_path=stranger.ca_path,
        timeout_seconds=2.0,
        drain_timeout_seconds=2.0,
        retry=NO_RETRY,
    )

    with pytest.raises(UnavailableError, match="certificate verify failed"):
        client.get()
    client.close()


def test_a_certificate_for_another_name_is_refused(
    certs: TestCertificates, serve: ServerFactory, tmp_path: Path
) -> None:
    # The certificate names localhost and 127.0.0.1; the server is reached as 127.0.0.2.
    server = serve(lambda sock: answer(sock, b"{}"), host="127.0.0.2")

    with pytest.raises(UnavailableError, match="certificate verify failed"):
        transport(server.url, certs.ca_path, tmp_path, []).call("GET", "/x", read_seconds=2)


def test_a_missing_ca_file_is_unavailable_and_named(
    certs: TestCertificates, tmp_path: Path
) -> None:
    missing = tmp_path / "absent-ca.crt"

    with pytest.raises(UnavailableError, match=r"absent-ca\.crt"):
        transport("https://127.0.0.1:9", missing, tmp_path, []).call("GET", "/x", read_seconds=2)


def test_an_answer_longer_than_the_limit_is_refused_without_a_retry(
    certs: TestCertificates, serve: ServerFactory, tmp_path: Path
) -> None:
    body = b'{"padding": "' + b"x" * MAX_RESPONSE_BYTES + b'"}'

    def too_long(sock: socket.socket) -> None:
        read_request(sock)
        answer(sock, body)

    server = serve(too_long)
    sleeps: list[float] = []

    with pytest.raises(UnavailableError, match="too long"):
        transport(server.url, certs.ca_path, tmp_path, sleeps).call("GET", "/x", read_seconds=5)
    assert sleeps == []


def test_a_server_that_never_answers_is_given_up_on_after_the_read_timeout(
    certs: TestCertificates, serve: ServerFactory, tmp_path: Path
) -> None:
    server = serve(hold_until_closed)
    sleeps: list[float] = []

    with pytest.raises(UnavailableError, match="timed out"):
        transport(server.url, certs.ca_path, tmp_path, sleeps).call("GET", "/x", read_seconds=0.3)
    assert len(sleeps) == 2  # a timeout may pass: it is retried


def test_an_answer_that_trickles_in_is_given_up_on_at_the_read_deadline(
    certs: TestCertificates, serve: ServerFactory, tmp_path: Path
) -> None:
    body = b" " * 600 + b"{}"  # a byte a tenth of a second: a minute in all
    sent: list[int] = []

    def trickle(sock: socket.socket) -> None:
        read_request(sock)
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
        for index in range(len(body)):
            sock.sendall(body[index : index + 1])
            sent.append(index)
            time.sleep(0.1)

    server = serve(trickle)

    with pytest.raises(UnavailableError, match="timed out"):
        transport(server.url, certs.ca_path, tmp_path, []).call("GET", "/x", read_seconds=1)
    assert len(sent) < len(body)


def test_a_server_that_never_completes_the_handshake_is_given_up_on(
    certs: TestCertificates, serve: ServerFactory, tmp_path: Path
) -> None:
    server = serve(hold_until_closed, handshake=False)

    with pytest.raises(UnavailableError, match="timed out"):
        transport(server.url, certs.ca_path, tmp_path, []).call("GET", "/x", read_seconds=0.3)


def test_a_long_poll_may_outlast_the_client_timeout(rig: Rig, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text(rig.cluster.issue_token(NS, agent_pod("n1")))
    client = ApiserverClient(
        base_url=rig.server.base_url,
        node_name="n1",
        token_path=token,
        ca_path=rig.certs.ca_path,
        timeout_seconds=0.5,
        drain_timeout_seconds=0.5,
        retry=NO_RETRY,
    )
    created = client.create()

    assert client.wait_for_change(created.resource_version, 1.5) == created
    client.close()


def test_a_kept_connection_the_server_closed_is_replaced_without_a_retry(
    certs: TestCertificates, serve: ServerFactory, tmp_path: Path
) -> None:
    closed = threading.Event()

    def once_then_close(sock: socket.socket) -> None:
        read_request(sock)
        answer(sock, b'{"answer": 1}')  # keep-alive, yet the server closes right after
        sock.close()
        closed.set()

    server = serve(once_then_close)
    sleeps: list[float] = []
    client = transport(server.url, certs.ca_path, tmp_path, sleeps)

    first = client.call("GET", "/x", read_seconds=5)
    assert closed.wait(5)
    second = client.call("GET", "/x", read_seconds=5)

    assert (first.json(), second.json()) == ({"answer": 1}, {"answer": 1})
    assert sleeps == []
    assert server.connections == 2
    client.close()


def test_one_connection_is_kept_and_reused_between_calls(
    certs: TestCertificates, serve: ServerFactory, tmp_path: Path
) -> None:
    def keep_alive(sock: socket.socket) -> None:
        while read_request(sock):
            answer(sock, b"{}")

    server = serve(keep_alive)
    client = transport(server.url, certs.ca_path, tmp_path, [])

    for _ in range(3):
        assert client.call("GET", "/x", read_seconds=5).status == 200
    assert server.connections == 1
    client.close()
