"""1,000 connections that never start TLS keep `brupop apiserver` well under its memory limit."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.apiserver.conftest import start_brupop_apiserver
from tests.integration.apiserver.raw_client import ping_soon
from tests.support.polling import wait_until
from tests.support.tls import TestCertificates

MEMORY_LIMIT_MIB = 256  # the chart's limit


def _kib(path: Path, field: str) -> int:
    for line in path.read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in {path}")


def _peak_rss_mib(pid: int) -> float:
    """The larger of the peak the kernel keeps (from its per-CPU counters, which may trail a
    little) and the resident size counted now from the page tables (exact)."""
    peak = _kib(Path(f"/proc/{pid}/status"), "VmHWM")
    now = _kib(Path(f"/proc/{pid}/smaps_rollup"), "Rss")
    return max(peak, now) / 1024


def _open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.fixture
def apiserver_process(certs: TestCertificates) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    # A long handshake timeout: the test counts memory, and must not see connections time out.
    process, port = start_brupop_apiserver(certs, APISERVER_TLS_HANDSHAKE_TIMEOUT_SECONDS="60")
    try:
        ping_soon(port, certs.ca_path)
        yield process, port
    finally:
        process.kill()
        process.communicate(timeout=20)


def test_a_thousand_connections_that_never_start_tls_stay_well_under_the_memory_limit(
    apiserver_process: tuple[subprocess.Popen[bytes], int], certs: TestCertificates
) -> None:
    process, port = apiserver_process
    files_before = _open_files(process.pid)
    with contextlib.ExitStack() as held:
        for _ in range(1000):
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
            held.enter_context(connection)
        wait_until(
            lambda: _open_files(process.pid) >= files_before + 990,  # all but a few
            "the server's accepting the connections",
            interval=0.05,
        )
        # A request answered after the accepts: the event loop has set each connection up.
        ping_soon(port, certs.ca_path)
        rss = _peak_rss_mib(process.pid)

    assert rss < MEMORY_LIMIT_MIB / 2, f"{rss:.0f} MiB with 1,000 idle connections"
