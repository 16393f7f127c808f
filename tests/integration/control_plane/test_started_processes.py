"""Processes that outlive the call starting them are stopped through their records, often by a
`down` in another process; the starter still waits for them, so Python never warns at exit
about a child it did not wait for."""

from __future__ import annotations

import gc
import os
import signal
import warnings
from pathlib import Path

from tests.support.control_plane.processes import (
    STARTED,
    RunFolder,
    outlive,
    reap_exited,
    start,
    stop,
)
from tests.support.polling import wait_until


def is_zombie(pid: int) -> bool:
    """Exited, its status not yet collected by its parent (this process)."""
    stat = (Path("/proc") / str(pid) / "stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_a_process_stopped_elsewhere_is_waited_for_and_collected_without_a_warning(
    tmp_path: Path,
) -> None:
    process = outlive(start(RunFolder(tmp_path), "sleeper", ["sleep", "60"]))
    pid = process.pid
    os.kill(pid, signal.SIGKILL)  # as a `down` run by another process does
    wait_until(lambda: is_zombie(pid), "the killed process exits", seconds=30)
    reap_exited()
    assert process not in STARTED
    assert process.returncode == -signal.SIGKILL
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del process
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_a_process_still_running_stays_kept_until_it_is_stopped(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    process = outlive(start(folder, "sleeper", ["sleep", "60"]))
    reap_exited()
    assert process in STARTED and process.returncode is None
    record = folder.read("sleeper")
    assert record is not None
    stop(folder, record)
    reap_exited()
    assert process not in STARTED and process.returncode is not None
