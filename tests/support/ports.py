"""Free ports for the servers tests start, chosen below the kernel's ephemeral range.

A port the kernel picks for a probe (`bind(("127.0.0.1", 0))`) comes from the ephemeral range,
which every outgoing connection draws from too: between the probe and the server's own bind, a
busy machine (thousands of benchmark agents, another suite) can give that port to a connection,
and the server cannot start. Ports below the range are never handed out that way. Each process
walks its own share of them from a random start, so parallel test workers never pick the same
port, and a port some socket already holds is passed over.
"""

from __future__ import annotations

import errno
import itertools
import os
import random
import socket
from collections.abc import Iterator
from pathlib import Path

# Above the ports Kubernetes' own components listen on (10250 and near), and below NodePorts
# (30000 up) and the ephemeral range (32768 up, unless this machine says otherwise).
LOWEST_PORT = 20_000
HIGHEST_PORT = 29_999
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
TRIES = 500
# What binding `::` raises where this machine has no IPv6: then IPv4's wildcard is checked alone.
_NO_IPV6 = (errno.EAFNOSUPPORT, errno.EADDRNOTAVAIL)

_walk: Iterator[int] | None = None


def free_port() -> int:
    """A port no socket holds now, on any address, IPv4 or IPv6."""
    global _walk
    if _walk is None:
        _walk = _ports_of_this_process()
    for port in itertools.islice(_walk, TRIES):
        if _bindable(port):
            return port
    raise RuntimeError(f"no free port in {TRIES} tries below the ephemeral range")


def free_ports(count: int) -> list[int]:
    """`count` different free ports."""
    return [free_port() for _ in range(count)]


def _ports_of_this_process() -> Iterator[int]:
    """This process's share of the ports below the ephemeral range, round and round."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker) if worker.isdigit() else 0
    size = (_end() - LOWEST_PORT) // max(workers, 1)
    first = LOWEST_PORT + index * size
    start = random.randrange(size)
    return (first + (start + step) % size for step in itertools.count())


def _end() -> int:
    """One past the highest port to use: `HIGHEST_PORT`, or below the ephemeral range."""
    try:
        ephemeral = int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = HIGHEST_PORT + 1
    return max(min(HIGHEST_PORT + 1, ephemeral), LOWEST_PORT + 1_000)


def _bindable(port: int) -> bool:
    """Whether `port` can be bound on every address now (dual-stack where IPv6 is up)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            probe.bind(("::", port))
        return True
    except OSError as error:
        if error.errno not in _NO_IPV6:
            return False
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("0.0.0.0", port))
    except OSError:
        return False
    return True
