"""`brupop apiserver`: read settings, wire the app, serve HTTPS until SIGTERM.

Bad settings end the process at once with one line naming the variable (exit 2); a fatal
problem at start (TLS files, cluster) is one line too, also written to the termination log.
"""

from __future__ import annotations

import gc
import signal
import socket
import ssl
import sys
from pathlib import Path

from starlette.applications import Starlette

from brupop.adapters.apiserver_http.serving.server import bind, uvicorn_server
from brupop.adapters.apiserver_http.serving.tls import CertificateReloader
from brupop.entrypoints.apiserver.container import ApiserverContainer, options_from
from brupop.entrypoints.apiserver.settings import ApiserverSettings, load_settings
from brupop.entrypoints.invocation import EXIT_FATAL, EXIT_OK, answer_arguments
from brupop.entrypoints.logging.log_filter import LogFilter
from brupop.entrypoints.logging.logs import start_logging
from brupop.entrypoints.logging.stdlib_logging import route_to_structlog
from brupop.entrypoints.settings_error import SettingsError, refuse_start
from brupop.ports.errors import PortError

USAGE = """usage: brupop apiserver

Serve the agents' HTTPS API. Configured by environment variables (see docs/apiserver.md):
APISERVER_INTERNAL_PORT, APISERVER_BIND_ADDRESS, APISERVER_TLS_CERT_PATH, APISERVER_TLS_KEY_PATH,
APISERVER_WEBHOOK_PORT, DRAIN_TIMEOUT_SECONDS, EVICTION_RETRY_INTERVAL_SECONDS,
POD_DELETION_TIMEOUT_SECONDS, TOKEN_REVIEW_CACHE_SECONDS, TOKEN_REFUSAL_CACHE_SECONDS,
TOKEN_REVIEW_THREADS, BRUPOP_NAMESPACE, BRUPOP_CLUSTER (kubernetes|memory),
APISERVER_MAX_CONNECTIONS, APISERVER_WEBHOOK_MAX_CONNECTIONS,
APISERVER_MAX_CONNECTIONS_PER_ADDRESS, APISERVER_PROBE_RESERVE_CONNECTIONS,
APISERVER_TLS_HANDSHAKE_TIMEOUT_SECONDS, APISERVER_HEADER_TIMEOUT_SECONDS."""

HTTP_SERVER_LOGGERS = ("uvicorn", "asyncio")

# When every shadow changes at once, every waiting agent's answer and next long-poll allocate a
# few dozen container objects, nearly all freed by reference counting at once. At the default
# threshold (700) the cyclic collector ran every few answers and, with a thousand agents, a full
# collection over every waiting connection's objects every other burst: 28 % of a burst's CPU
# (docs/bench.md, section 6). The apiserver makes almost no cycles; they wait a little longer.
YOUNG_COLLECTION_THRESHOLD = 10_000


def main(argv: list[str]) -> int:
    """Run the apiserver; the exit code says how it ended."""
    answered = answer_arguments("apiserver", argv, USAGE)
    if answered is not None:
        return answered
    try:
        settings = load_settings()
    except SettingsError as error:
        return refuse_start("apiserver", error)
    log = start_logging(
        "apiserver",
        None,
        formatter=settings.logging_formatter,
        directive=settings.tracing_filter_directive,
    )
    # The HTTP server's and the event loop's own records, as lines of the same log.
    level = LogFilter.parse(settings.tracing_filter_directive, "apiserver").level
    route_to_structlog(HTTP_SERVER_LOGGERS, level=level)
    try:
        certificates = CertificateReloader(settings.tls_cert_path, settings.tls_key_path)
        app = build_app(settings)
        sockets = _sockets(settings)
    except (OSError, ssl.SSLError, PortError) as error:
        return _fatal(settings, f"cannot start: {error}")
    server = uvicorn_server(
        app,
        certificates=certificates,
        host=settings.bind_address,
        port=settings.internal_port,
        limits=settings.server_limits(),
        webhook_port=settings.webhook_port,
    )
    log.info("apiserver.started", port=settings.internal_port, cluster=settings.cluster)
    # uvicorn stops gracefully on SIGTERM/SIGINT, then re-raises the signal to the handlers that
    # were there before it: make those quiet, so the stop ends with exit code 0.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _ignore)
    collect_less_often()
    server.run(sockets=sockets)
    log.info("apiserver.stopped")
    return EXIT_OK


def build_app(settings: ApiserverSettings) -> Starlette:
    """The app the container builds from the settings (UnavailableError: no cluster)."""
    container = ApiserverContainer(options=options_from(settings))
    container.settings.from_dict(settings.model_dump())
    app: Starlette = container.app()
    return app


def collect_less_often() -> None:
    """The cyclic garbage collector's youngest generation collected after
    YOUNG_COLLECTION_THRESHOLD allocations (net of frees), not 700; the older ones as before."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, oldest)


def _sockets(settings: ApiserverSettings) -> list[socket.socket]:
    """The listening sockets: the agents' port, and the webhook's when set (there only
    /crdconvert, /ping and /readyz are served)."""
    sockets = [bind(settings.bind_address, settings.internal_port)]
    if settings.webhook_port is not None:
        sockets.append(bind(settings.bind_address, settings.webhook_port))
    return sockets


def _ignore(_signal: int, _frame: object) -> None:
    return


def _fatal(settings: ApiserverSettings, message: str) -> int:
    print(f"brupop apiserver: {message}", file=sys.stderr)
    _write_termination_log(settings.termination_log, message)
    return EXIT_FATAL


def _write_termination_log(path: Path, message: str) -> None:
    try:
        path.write_text(message + "\n")
    except OSError:
        return
