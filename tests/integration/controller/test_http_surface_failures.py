"""A bug behind the controller's HTTP surface is one log line and a short 500, never a raw
traceback to the caller, and the server goes on answering."""

from __future__ import annotations

import urllib.error
import urllib.request

from structlog.testing import capture_logs

from brupop.entrypoints.controller.http_server import ControllerHttpServer, Surface
from tests.unit.services.controller.fleet import Fleet


def _broken_metrics() -> bytes:
    raise RuntimeError("a bug in the exposition")


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_handler_that_fails_answers_a_short_500_and_logs_one_line() -> None:
    controller = Fleet(1).controller(1)
    server = ControllerHttpServer(Surface(_broken_metrics, controller), "127.0.0.1", 0)
    server.start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        with capture_logs() as logs:
            code, body = _get(f"{base}/metrics")
        after, _ = _get(f"{base}/healthz")
    finally:
        server.stop()

    assert code == 500
    assert body == b"internal error; the controller's log says which\n"
    assert [(e["event"], e["path"], e["error"]) for e in logs] == [
        ("http.handler_failed", "/metrics", "RuntimeError")
    ]
    assert after == 200
