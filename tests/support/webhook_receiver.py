"""Webhook receivers on loopback for the notification tests: one records every POST and answers
as a test tells it (a status code per request, a pause before answering); one drips its
answer's headers forever."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "notification.v1.schema.json"


def notification_schema() -> dict[str, Any]:
    """The documented JSON schema of the `json` format."""
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text())
    return loaded


def validate_v1(body: dict[str, Any]) -> None:
    """Raise if `body` breaks the documented schema."""
    jsonschema.validate(body, notification_schema(), format_checker=jsonschema.FormatChecker())


@dataclass
class Receiver:
    """What the receiver saw, and how it answers."""

    url: str = ""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    answers: list[int] = field(default_factory=list)  # next answers; then `default_status`
    default_status: int = 200
    hold: threading.Event | None = None  # set: answer; unset: hang until it is set
    lock: threading.Lock = field(default_factory=threading.Lock)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def kinds(self) -> list[str]:
        with self.lock:
            return [str(body.get("kind") or body.get("text")) for body in self.bodies]

    def wait_for(self, condition: Callable[[Receiver], bool], seconds: float = 30.0) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: condition(self), seconds)

    def _answer(self, body: dict[str, Any]) -> int:
        with self.lock:
            self.requests += 1
            status = self.answers.pop(0) if self.answers else self.default_status
            if 200 <= status < 300:
                self.bodies.append(body)
        with self.arrived:
            self.arrived.notify_all()
        return status


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if receiver.hold is not None:
                receiver.hold.wait(60)
            status = receiver._answer(body)
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def running_receiver(receiver: Receiver | None = None) -> Iterator[Receiver]:
    """A receiver on 127.0.0.1 (a free port) for the duration of the block."""
    seen = receiver or Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(seen))
    server.daemon_threads = True
    seen.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        if seen.hold is not None:
            seen.hold.set()
        server.shutdown()
        server.server_close()


@dataclass
class Drip:
    """A receiver that takes each request and then drips its answer's headers, a byte at a time,
    for as long as the test lasts: each read finishes within any socket timeout, the answer
    never does."""

    url: str = ""
    connections: int = 0
    closed: int = 0  # connections the client gave up
    byte_every_seconds: float = 0.05
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextmanager
def dripping_receiver(drip: Drip | None = None) -> Iterator[Drip]:
    """A `Drip` on 127.0.0.1 (a free port) for the duration of the block."""
    seen = drip or Drip()
    done = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    seen.url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            try:
                while not done.wait(seen.byte_every_seconds):
                    conn.sendall(b"X")
                # The block ends with the answer unfinished: hang up with a reset, so that the
                # client never takes the bytes so far for a whole answer.
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                with seen.lock:
                    seen.closed += 1

    def accept() -> None:
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with seen.lock:
                seen.connections += 1
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield seen
    finally:
        done.set()
        thread.join(2)
        listener.close()
