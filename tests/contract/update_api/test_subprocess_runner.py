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


def test_a_child_that_writes_without_end_is_killed_at_the_output_bound() -> None:
    marker = f"chatty-{uuid.uuid4().hex}"
    chatty = f"import sys\nwhile True: sys.stdout.write('x' * 65536)  # {marker}"

    with pytest.raises(HostUnavailableError, match="wrote more than 100000 bytes; killed"):
        SubprocessRunner(SystemClock(), output_max_bytes=100_000)([PY, "-c", chatty], 60)

    assert not _running(marker), "the child was killed, not left writing"


def test_stdout_and_stderr_larger_than_a_pipe_are_both_read_whole() -> None:
    # 256 KiB on stderr first: a reader waiting on stdout alone would never see the child end.
    code = "import sys; sys.stderr.write('e' * 262144); sys.stderr.flush(); print('o' * 262144)"

    result = SubprocessRunner(SystemClock())([PY, "-c", code], 60)

    assert (len(result.stdout.strip()), len(result.stderr)) == (262144, 262144)


def test_a_child_that_closes_its_output_but_lives_on_is_killed_at_the_timeout() -> None:
    marker = f"silent-{uuid.uuid4().hex}"
    silent = f"import os, time\nos.close(1); os.close(2); time.sleep(3600)  # {marker}"

    with pytest.raises(HostUnavailableError, match="no answer within"):
        SubprocessRunner(SystemClock())([PY, "-c", silent], 0.5)

    assert not _running(marker), "the child was killed, not left running"
