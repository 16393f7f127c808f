"""A process's resident memory, CPU time and established TCP connections, read from /proc."""

from __future__ import annotations

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")
_ESTABLISHED = "01"


def rss_mib(pid: int) -> float:
    """VmRSS of `pid`, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def established_on_port(table: str, port: int, inodes: set[str]) -> int:
    """Rows of a /proc/net/tcp table that are ESTABLISHED on local `port` and owned by one of
    `inodes` (a pure reading of the table's text)."""
    count = 0
    for row in table.splitlines()[1:]:
        fields = row.split()
        if len(fields) < 10:
            continue
        local_port = int(fields[1].rsplit(":", 1)[1], 16)
        if local_port == port and fields[3] == _ESTABLISHED and fields[9] in inodes:
            count += 1
    return count


def connections(pid: int, port: int) -> int:
    """Established connections that `pid` accepted on `port` (IPv4 and IPv6)."""
    inodes = socket_inodes(pid)
    total = 0
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if path.exists():
            total += established_on_port(path.read_text(), port, inodes)
    return total
