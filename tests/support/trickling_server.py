"""An HTTP server on loopback that sends a 200 head at once, then its body one byte at a time:
what a client whose timeout bounds each read, not the exchange, would wait on for ever."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_ACCEPT_SECONDS = 0.1
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"


@contextmanager
def trickling_server(body: bytes, pause: float) -> Iterator[str]:
    """Its base URL while the block runs; each connection gets `body`, one byte each `pause`
    seconds (0: all at once), until the client goes."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(_ACCEPT_SECONDS)  # a blocked accept() would not see the close
    done = threading.Event()
    thread = threading.Thread(target=_serve, args=(listener, body, pause, done), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        done.set()
        thread.join(timeout=30)
        listener.close()


def _serve(listener: socket.socket, body: bytes, pause: float, done: threading.Event) -> None:
    while not done.is_set():
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        connection.settimeout(None)
        with connection:
            try:
                connection.recv(65536)
                connection.sendall(HEAD % len(body))
                for index in range(len(body)):
                    if done.is_set():
                        return
                    connection.sendall(body[index : index + 1])
                    time.sleep(pause)
            except OSError:
                continue  # the client gave up
