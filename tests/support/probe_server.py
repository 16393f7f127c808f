"""A loopback HTTP server for probe and alert-source tests: fixed answers by path, a path that
never answers (until the server stops), and a path with a body far larger than any reader's cap.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType

SLOW_PATH = "/slow"
BIG_PATH = "/big"
BIG_BODY_BYTES = 16 * 1024 * 1024
STALL_MAX_SECONDS = 30.0  # a stalled answer still ends, so a broken test cannot hang forever


class ProbeServer:
    """`with ProbeServer() as server:` serves `server.answers` (path -> (status, body))."""

    def __init__(self) -> None:
        self.answers: dict[str, tuple[int, bytes]] = {}
        self.content_types: dict[str, str] = {}  # by path; JSON when not given
        self.requests: list[str] = []
        self.hosts: list[str] = []  # the Host header of each request
        self.stalls_ended = 0  # requests to SLOW_PATH the server stopped holding
        self._stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(self.path)
                owner.hosts.append(self.headers.get("Host", ""))
                if self.path == SLOW_PATH:
                    owner._stop.wait(STALL_MAX_SECONDS)
                    owner.stalls_ended += 1
                    return
                if self.path == BIG_PATH:
                    self._send(200, b"", length=BIG_BODY_BYTES)
                    chunk = b"x" * 65536
                    try:
                        for _ in range(BIG_BODY_BYTES // len(chunk)):
                            self.wfile.write(chunk)
                    except OSError:
                        return  # the reader stopped reading: that is the point
                    return
                path = self.path.split("?")[0]
                status, body = owner.answers.get(path, (404, b"not found"))
                self._send(status, body, kind=owner.content_types.get(path))

            def _send(
                self,
                status: int,
                body: bytes,
                length: int | None = None,
                kind: str | None = None,
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ProbeServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
