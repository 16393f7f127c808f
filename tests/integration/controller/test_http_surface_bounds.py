"""Whoever reaches the controller's HTTP port cannot pile up its threads: a connection that
sends nothing is closed, and past the most connections served at once one more is closed at
once, while the server goes on answering when they are gone."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from brupop.entrypoints.controller import http_server
from tests.support.controller_surface import serve_controller
from tests.support.polling import wait_until
from tests.support.trickling_client import trickle_until_closed
from tests.unit.services.controller.fleet import Fleet

HEALTHZ = b"GET /healthz HTTP/1.0\r\n\r\n"


@pytest.fixture
def port() -> Iterator[int]:
    with serve_controller(Fleet(1)) as (url, _):
        yield int(url.rsplit(":", 1)[1])


def _answer(port: int, request: bytes = HEALTHZ) -> bytes:
    """What the server sends back to `request` on a new connection (b"": closed unanswered)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(request)
        return _read_all(connection)


def _read_all(connection: socket.socket) -> bytes:
    received = b""
    try:
        while chunk := connection.recv(4096):
            received += chunk
    except ConnectionResetError:
        pass  # closed unread: the kernel resets rather than ends the connection
    return received


def test_a_connection_that_sends_nothing_is_closed(
    port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http_server, "READ_SECONDS", 0.2)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as idle:
        idle.sendall(b"GET /hea")  # and never the rest
        assert _read_all(idle) == b""  # closed by the server, well before this read's 30 s


def test_past_the_most_connections_one_more_is_closed_and_served_again_when_they_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http_server, "CONNECTIONS_MAX", 3)
    with serve_controller(Fleet(1)) as (url, _), ExitStack() as held:
        port = int(url.rsplit(":", 1)[1])
        for _ in range(3):
            idle = held.enter_context(socket.create_connection(("127.0.0.1", port), timeout=30))
            idle.sendall(b"GET /hea")
        wait_until(lambda: _answer(port) == b"", "a fourth connection closed unanswered")
        held.close()
        wait_until(
            lambda: _answer(port).startswith(b"HTTP/1.0 200"), "/healthz answered once they go"
        )


def test_a_request_that_trickles_in_is_closed_at_the_deadline_for_the_whole_request(
    port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http_server, "READ_SECONDS", 0.5)
    request = b"GET /healthz HTTP/1.0\r\nX-Padding: " + b"a" * 300 + b"\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as slow:
        _, sent = trickle_until_closed(slow, request)  # a byte each 0.05 s, well within 0.5 s
    # The whole request would take 16 s; the server closes it after 0.5 s, well before.
    assert sent < len(request)
