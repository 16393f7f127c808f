"""The secrets a simulation writes in its work directory, and their removal when it is kept.

A kept work directory (`--work-dir`, or a failed run without `--log-dir`) is for reading what
happened: it keeps the logs, hosts and certificates, but not the serving key nor the agents'
tokens, which the run no longer needs once its processes are stopped.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

# Where certificates.write_loopback_tls and fleet.build_fleet put them.
SECRET_PATTERNS = ("tls/*.key", "nodes/*/token")


def remove_secrets(work_dir: Path) -> list[Path]:
    """Delete every secret the run wrote under `work_dir`; return the paths removed."""
    removed = []
    for pattern in SECRET_PATTERNS:
        for path in sorted(work_dir.glob(pattern)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed.append(path)
    return removed
