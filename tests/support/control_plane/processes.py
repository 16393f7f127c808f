"""The control plane's OS processes: started detached with their logs in DIR/logs, recorded
in DIR/run/<name>.json (pid and exact argv), and stopped only when /proc/<pid>/cmdline
still shows that argv, so a recycled pid is never signalled."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

STOP_GRACE_SECONDS = 15.0
# Processes that outlive the call that started them: stopped through their records, often by a
# `down` run elsewhere. Their Popen objects are kept here until `reap_exited` waits for them,
# since Python warns when it collects the Popen of a child it never waited for.
STARTED: list[subprocess.Popen[bytes]] = []


@dataclass(frozen=True)
class Record:
    """What `up` wrote down about one process it started."""

    name: str
    pid: int
    argv: list[str]


@dataclass(frozen=True)
class RunFolder:
    """DIR: run/ holds the records, logs/ the output of each process."""

    root: Path

    @property
    def records(self) -> Path:
        return self.root / "run"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def log(self, name: str) -> Path:
        return self.logs / f"{name}.log"

    def record_path(self, name: str) -> Path:
        return self.records / f"{name}.json"

    def read(self, name: str) -> Record | None:
        path = self.record_path(name)
        if not path.exists():
            return None
        fields = json.loads(path.read_text())
        return Record(name, int(fields["pid"]), [str(part) for part in fields["argv"]])

    def all_records(self) -> list[Record]:
        if not self.records.is_dir():
            return []
        names = sorted(path.stem for path in self.records.glob("*.json"))
        return [record for name in names if (record := self.read(name)) is not None]


def start(
    folder: RunFolder, name: str, argv: list[str], env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start `argv` in its own session, output to DIR/logs/<name>.log, and record it; `env`
    adds to the environment it inherits."""
    folder.logs.mkdir(parents=True, exist_ok=True)
    folder.records.mkdir(parents=True, exist_ok=True)
    with folder.log(name).open("ab") as log:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=folder.root,
            env={**os.environ, **env} if env else None,
        )
    record = {"pid": process.pid, "argv": argv}
    folder.record_path(name).write_text(json.dumps(record) + "\n")
    return process


def outlive(process: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """Keep `process`, which outlives its starter's call, until `reap_exited` finds it exited."""
    STARTED.append(process)
    return process


def reap_exited() -> None:
    """Wait for the kept processes that have exited (a `down` may have stopped them)."""
    STARTED[:] = [process for process in STARTED if process.poll() is None]


def is_ours(record: Record) -> bool:
    """Alive (not a zombie) and still running exactly the recorded command line."""
    proc = Path("/proc") / str(record.pid)
    try:
        cmdline = (proc / "cmdline").read_bytes()
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z" and cmdline.split(b"\0")[:-1] == [part.encode() for part in record.argv]


def stop(folder: RunFolder, record: Record) -> str:
    """SIGTERM, wait up to the grace period, then SIGKILL; forget the record. Says what it did."""
    if not is_ours(record):
        folder.record_path(record.name).unlink(missing_ok=True)
        return f"{record.name}: not running (pid {record.pid} is gone or not ours)"
    os.kill(record.pid, signal.SIGTERM)
    outcome = "stopped"
    if not wait_gone(record, STOP_GRACE_SECONDS) and is_ours(record):
        os.kill(record.pid, signal.SIGKILL)
        wait_gone(record, 5.0)
        outcome = "killed after the grace period"
    folder.record_path(record.name).unlink(missing_ok=True)
    return f"{record.name}: {outcome} (pid {record.pid})"


def kill(folder: RunFolder, record: Record) -> str:
    """SIGKILL at once (a crash: no graceful shutdown), wait until gone; forget the record."""
    if is_ours(record):
        os.kill(record.pid, signal.SIGKILL)
        wait_exited(record.pid, 10.0)
    folder.record_path(record.name).unlink(missing_ok=True)
    return f"{record.name}: killed (pid {record.pid})"


def wait_gone(record: Record, seconds: float) -> bool:
    """Until the signalled process has exited (see `wait_exited`: its command line goes before
    its files, and a lock or socket it holds lasts until then)."""
    return wait_exited(record.pid, seconds)


def wait_exited(pid: int, seconds: float) -> bool:
    """Wait until the process is gone or a zombie: only then are its sockets closed (an exiting
    process drops its command line before its files, so `is_ours` turns false too early)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reap(pid)
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def reap(pid: int) -> None:
    """Collect the exit status when the process is our own child (as in `up`'s cleanup)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def resident_mib(pid: int) -> float | None:
    """VmRSS of a process in MiB, None when it is gone."""
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except FileNotFoundError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return None


def log_tail(path: Path, lines: int = 25) -> str:
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
