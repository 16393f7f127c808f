"""`brupop status --url` bounds the whole exchange: a server that trickles its answer, or
sends more than any controller's status, is one line and exit 1, never a command that waits
for ever or reads without end."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from brupop.cli.status import reaching
from brupop.cli.status.main import main

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"


def _serve(listener: socket.socket, answer: bytes, pause: float) -> None:
    """Answer each connection with `answer`, one byte each `pause` seconds after the head."""
    while True:
        try:
            connection, _ = listener.accept()
        except OSError:
            return  # the listener closed: the test is over
        with connection:
            try:
                connection.recv(65536)
                connection.sendall(HEAD % len(answer))
                for index in range(len(answer)):
                    connection.sendall(answer[index : index + 1])
                    time.sleep(pause)
            except OSError:
                continue  # the client gave up


@pytest.fixture
def server() -> Iterator[tuple[socket.socket, list[threading.Thread]]]:
    listener = socket.create_server(("127.0.0.1", 0))
    threads: list[threading.Thread] = []
    yield listener, threads
    listener.close()
    for thread in threads:
        thread.join(timeout=30)


def _start(
    server: tuple[socket.socket, list[threading.Thread]], answer: bytes, pause: float
) -> str:
    listener, threads = server
    thread = threading.Thread(target=_serve, args=(listener, answer, pause), daemon=True)
    thread.start()
    threads.append(thread)
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_a_server_that_trickles_its_answer_is_cut_off_at_the_deadline(
    server: tuple[socket.socket, list[threading.Thread]], capsys: pytest.CaptureFixture[str]
) -> None:
    url = _start(server, b" " * 600 + b"{}", pause=0.1)  # a byte a tenth of a second: 60 s

    assert main(["--url", url, "--timeout", "1"]) == 1

    err = capsys.readouterr().err
    assert err == f"brupop status: cannot read {url}/status: no answer within 1 s\n"


def test_an_answer_larger_than_any_status_is_refused_unread(
    server: tuple[socket.socket, list[threading.Thread]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reaching, "STATUS_MAX_BYTES", 1000)
    url = _start(server, b"{" + b" " * 2000 + b"}", pause=0)

    assert main(["--url", url, "--timeout", "30"]) == 1

    err = capsys.readouterr().err
    assert err == f"brupop status: cannot read {url}/status: larger than 1000 bytes\n"
