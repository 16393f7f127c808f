"""One real-node cluster per machine: `up` takes an flock on a file in the cache and hands it
to a small holder process recorded in DIR/real-nodes/run, so the lock lasts until `down` stops
that process (by its recorded pid), whatever happens to the shell that ran `up`."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

from tests.support.control_plane.processes import (
    Record,
    RunFolder,
    is_ours,
    outlive,
    reap_exited,
    stop,
)

HOLDER_NAME = "brupop-real-nodes-lock"


class MachineBusy(Exception):
    """Another real-node cluster runs on this machine; the message names its folder."""


def acquire(lock: Path, root: Path, records: RunFolder) -> None:
    """Take the lock for run folder `root`, or raise MachineBusy naming the holder's folder."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = lock.read_text(errors="replace").strip()[:300] or "an unknown folder"
            raise MachineBusy(owner) from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{root}\n".encode())
        argv = [HOLDER_NAME, "infinity"]
        records.records.mkdir(parents=True, exist_ok=True)
        holder = subprocess.Popen(
            ["bash", "-c", f"exec -a {HOLDER_NAME} sleep infinity"],
            pass_fds=(descriptor,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        outlive(holder)
        record = {"pid": holder.pid, "argv": argv}
        records.record_path("lock").write_text(json.dumps(record) + "\n")
        wait_exec(Record("lock", holder.pid, argv))
    finally:
        os.close(descriptor)


def wait_exec(record: Record, seconds: float = 30.0) -> None:
    """Until the holder runs as recorded: `release` stops only a process that matches."""
    deadline = time.monotonic() + seconds
    while not is_ours(record) and time.monotonic() < deadline:
        time.sleep(0.01)


def release(records: RunFolder) -> None:
    record = records.read("lock")
    if record is not None:
        stop(records, record)
    reap_exited()


def is_free(lock: Path) -> bool:
    """No cluster with real nodes holds the machine now (a test waits on this before `up`)."""
    if not lock.exists():
        return True
    descriptor = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(descriptor)
    return True
