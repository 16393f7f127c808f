"""The controller's plain-HTTP surface: `/metrics` (no auth, as Prometheus scrapes it),
`/healthz` and `/readyz` for probes, `/status` (the JSON `brupop status` prints).

A small threaded stdlib server: four read-only GET routes need no web framework. Anyone who
can reach the port is bounded: at most CONNECTIONS_MAX connections are served at once (one more
is closed at once), and a connection whose request has not arrived within READ_SECONDS is
closed, however slowly its bytes trickle in, so idle or slow connections cannot pile up threads
until the controller runs out of memory. `/status` is rendered at most once a second however
many ask (`RenderedStatus`).
"""

from __future__ import annotations

import io
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import structlog
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from brupop.adapters.system.reads_before import ReadsBefore
from brupop.services.controller.service import ControllerService

CONNECTIONS_MAX = 128
READ_SECONDS = 10.0
STATUS_FRESH_SECONDS = 1.0
JSON = "application/json"
TEXT = "text/plain; charset=utf-8"

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Surface:
    """What the routes read: the metrics exposition and the controller service."""

    metrics: Callable[[], bytes]
    controller: ControllerService


def status_document(controller: ControllerService) -> dict[str, Any]:
    """The `/status` body: this replica, the policy in force (`max_concurrent_update` is the
    limit the controller applies), one row per node, the offered versions' first-seen times
    and eligibility (`versions`), and the budgets in use, the expected update time and the
    clock's hold on starts (`scheduling`)."""
    config = controller.config
    window = config.window
    return {
        "identity": config.identity,
        "leader": controller.elector.is_leader(),
        "max_concurrent_update": str(controller.limit()),
        "schedule": {
            "expression": window.schedule.expression,
            "kind": window.kind.value,
            "time_zone": str(window.zone),
        },
        "nodes": [row.as_json() for row in controller.reports()],
        "versions": [standing.as_json() for standing in controller.versions()],
        "scheduling": controller.scheduling().as_json(),
    }


class RenderedStatus:
    """The `/status` body, rendered again only when the last one is `fresh_seconds` old: at
    5,000 nodes a rendering costs 0.1 s of CPU, so callers at once share one."""

    def __init__(
        self,
        controller: ControllerService,
        clock: Callable[[], float] = time.monotonic,
        fresh_seconds: float = STATUS_FRESH_SECONDS,
    ) -> None:
        self._controller = controller
        self._clock = clock
        self._fresh_seconds = fresh_seconds
        self._lock = threading.Lock()  # one rendering at a time; the others wait and share it
        self._body = b""
        self._rendered_at = 0.0

    def __call__(self) -> bytes:
        with self._lock:
            if not self._body or self._clock() - self._rendered_at >= self._fresh_seconds:
                document = status_document(self._controller)
                self._body = json.dumps(document, indent=2).encode() + b"\n"
                self._rendered_at = self._clock()
            return self._body


class ControllerHttpServer:
    """Serves the surface on `host:port` from a daemon thread."""

    def __init__(self, surface: Surface, host: str, port: int) -> None:
        status = RenderedStatus(surface.controller)
        handler = type("Handler", (_Handler,), {"surface": surface, "status": status})
        family_host = host.strip("[]")
        server_class = _IPv6Server if ":" in family_host else _BoundedServer
        self._server = server_class((family_host, port), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="controller-http", daemon=True
        )

    @property
    def port(self) -> int:
        """The port actually bound (useful with port 0)."""
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _BoundedServer(ThreadingHTTPServer):
    """A thread per connection, at most CONNECTIONS_MAX of them at once."""

    request_queue_size = CONNECTIONS_MAX  # the listen backlog; socketserver's default is 5

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(CONNECTIONS_MAX)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # full: closed unread, the caller may try again
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()  # no thread started to release it
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


class _IPv6Server(_BoundedServer):
    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    surface: Surface
    status: RenderedStatus
    server_version = "brupop-controller"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(READ_SECONDS)  # each write of the connection
        self.rfile.close()  # read instead within one deadline for the whole request
        deadline = time.monotonic() + READ_SECONDS
        self.rfile = io.BufferedReader(ReadsBefore(self.connection, deadline))

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        try:
            self._route(path)
        except Exception as error:  # a bug: one JSON line in the log, a short 500 to the caller
            log.error(
                "http.handler_failed", path=path[:200], error=type(error).__name__, exc_info=True
            )
            self._send(500, TEXT, b"internal error; the controller's log says which\n")

    def _route(self, path: str) -> None:
        controller = self.surface.controller
        if path == "/metrics":
            self._send(200, CONTENT_TYPE_LATEST, self.surface.metrics())
        elif path == "/healthz":
            healthy = controller.is_healthy()
            self._send(200 if healthy else 503, TEXT, b"ok\n" if healthy else b"loop stalled\n")
        elif path == "/readyz":
            ready = controller.is_ready()
            self._send(200 if ready else 503, TEXT, b"ok\n" if ready else b"starting\n")
        elif path == "/status":
            self._send(200, JSON, self.status())
        else:
            self._send(404, TEXT, b"not found: try /metrics, /healthz, /readyz or /status\n")

    def _send(self, code: int, content_type: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Probes and scrapes every few seconds are not worth a log line."""
        return None
