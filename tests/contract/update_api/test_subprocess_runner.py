"""SubprocessRunner with real child processes: exit codes, signals, timeouts, missing binary."""

from __future__ import annotations

import contextlib
import signal
import sys
import uuid
from pathlib import Path

import pytest

from brupop.adapters.apiclient.runner import SubprocessRunner
from brupop.adapters.system.clock import SystemClock
from brupop.ports.errors import HostUnavailableError

PY = sys.executable


def test_output_and_exit_code_are_recorded_as_bytes_decoded() -> None:
    code = "import sys; sys.stdout.write('out'); sys.stderr.buffer.write(b'err\\xff'); sys.exit(3)"

    result = SubprocessRunner(SystemClock())([PY, "-c", code], 10)

    assert (result.exit_code, result.signal) == (3, None)
    assert (result.stdout, result.stderr) == ("out", "err\ufffd")
    assert result.duration_seconds > 0


def test_a_child_killed_by_a_signal_records_the_signal() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"

    result = SubprocessRunner(SystemClock())([PY, "-c", code], 10)

    assert (result.exit_code, result.signal) == (None, signal.SIGTERM)


def _running(marker: str) -> bool:
    """Some process of this machine has `marker` in its command line (a zombie has none)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):  # a process that ended meanwhile
            if marker.encode() in cmdline.read_bytes():
                return True
    return False


def test_a_hung_child_is_killed_at_the_timeout() -> None:
    marker = f"hung-{uuid.uuid4().hex}"
    # The child would live an hour: the call's return shows the timeout ended it, not the child.
    hung = f"import time; time.sleep(3600)  # {marker}"

    with pytest.raises(HostUnavailableError, match="no answer within"):
        SubprocessRunner(SystemClock())([PY, "-c", hung], 0.5)

    assert not _running(marker), "the hung child was killed, not left running"


def test_a_missing_binary_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(HostUnavailableError, match="cannot run"):
        SubprocessRunner(SystemClock())([str(tmp_path / "apiclient"), "raw"], 1)
