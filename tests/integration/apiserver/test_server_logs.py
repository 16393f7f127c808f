"""`brupop apiserver` writes nothing but JSON lines, malformed or cut-short requests included,
and a client that hangs up mid-request is counted as its own fault, never 500, with no
traceback."""

from __future__ import annotations

import json
import signal
import ssl
import urllib.request
from pathlib import Path

from tests.integration.apiserver.conftest import start_brupop_apiserver
from tests.integration.apiserver.raw_client import (
    ping_soon,
    read_until_closed,
    send_all,
    tcp_connection,
    tls_connection,
)
from tests.support.polling import wait_until
from tests.support.tls import TestCertificates

CLIENT_FAULTS = {"400", "499"}


def metrics(port: int, ca_path: Path) -> str:
    context = ssl.create_default_context(cafile=str(ca_path))
    url = f"https://localhost:{port}/metrics"
    with urllib.request.urlopen(url, context=context, timeout=5) as response:
        text: str = response.read().decode()
        return text


def statuses(text: str) -> set[str]:
    """The status labels of the request counter."""
    found = set()
    for line in text.splitlines():
        if line.startswith("brupop_apiserver_requests_total{"):
            found.add(line.split('status="', 1)[1].split('"', 1)[0])
    return found


def send_malformed_requests(port: int, ca_path: Path) -> None:
    with tls_connection(port, ca_path) as connection:
        send_all(connection, b"HELLO THERE\r\n\r\n")
        read_until_closed(connection)
    with tls_connection(port, ca_path) as connection:
        send_all(
            connection, b"GET /ping HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"
        )
        read_until_closed(connection)
    with tcp_connection(port) as connection:  # not TLS at all
        send_all(connection, b"GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
        read_until_closed(connection)


def send_a_body_cut_short(port: int, ca_path: Path) -> None:
    with tls_connection(port, ca_path) as connection:
        head = b"POST /crdconvert HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n"
        connection.sendall(head + b"Content-Type: application/json\r\n\r\n" + b'{"kind": ')


def test_cut_short_and_malformed_requests_leave_only_json_lines_and_no_500(
    certs: TestCertificates,
) -> None:
    process, port = start_brupop_apiserver(certs, TRACING_FILTER_DIRECTIVE="debug")
    try:
        ping_soon(port, certs.ca_path)
        send_malformed_requests(port, certs.ca_path)
        send_a_body_cut_short(port, certs.ca_path)
        # The cut-short body is counted once its handler is done: a 4xx (400 or 499), never 500.
        seen: set[str] = set()

        def counted() -> bool:
            seen.update(statuses(metrics(port, certs.ca_path)))
            return bool((CLIENT_FAULTS | {"500"}) & seen)

        wait_until(counted, "the cut-short body counted", interval=0.05)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)

    assert "500" not in seen
    lines = err.decode().splitlines()
    assert lines, "the apiserver logged nothing"
    for line in lines:
        assert isinstance(json.loads(line), dict), line
    assert "Traceback" not in err.decode()
