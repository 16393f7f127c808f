"""A tiny container runtime for the simulated agents: `python -m ...simulate.runtime`.

It plays containerd to the simulation's kubelet: it starts each agent in a process group of
its own (the container), signals it on request, and reaps it with `os.wait4`, reporting the
exit code and the peak resident size the kernel accounted for it. It is a separate, small
process because a child's accounted peak starts at its parent's size: forked from the big
simulation process, every agent would look as large as the simulation itself.

Commands arrive as JSON lines on stdin, events leave as JSON lines on stdout. It dies with its
parent (PR_SET_PDEATHSIG) and every agent dies with it, so no agent ever outlives a run.

It also tells when each agent has a SIGTERM handler (the kernel's `SigCgt` mask), and whether a
SIGTERM it delivered found none: an interpreter still starting cannot run any code of ours, so
a death by such a signal is the harness's doing, not the agent's.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 0.02
_HANDLER_LOOK_SECONDS = 0.1  # how often starting agents' signal masks are read (100 agents: 1k/s)


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the simulation's to handle
    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:
        return 1
    runtime = _Runtime()
    try:
        runtime.serve()
    finally:
        runtime.kill_all()
    return 0


class _Runtime:
    def __init__(self) -> None:
        self.node_of: dict[int, str] = {}
        self.pid_of: dict[str, int] = {}
        self.handling: set[int] = set()  # pids seen with a SIGTERM handler
        self.next_look = 0.0

    def serve(self) -> None:
        pending = b""
        while True:
            self.reap(block=False)
            self.look_for_handlers()
            ready, _, _ = select.select([0], [], [], _POLL_SECONDS)
            if not ready:
                continue
            chunk = os.read(0, 65536)
            if not chunk:
                return  # the simulation closed our stdin (or is gone)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if line.strip() and not self.handle(json.loads(line)):
                    return

    def handle(self, command: dict[str, Any]) -> bool:
        op = command.get("op")
        if op == "spawn":
            node = str(command["node"])
            pid = _spawn(command["argv"], command["env"], command["log"])
            self.node_of[pid] = node
            self.pid_of[node] = pid
            _emit({"event": "started", "node": node, "pid": pid})
        elif op == "signal":
            target = self.pid_of.get(str(command["node"]))
            if target is not None:
                sig = int(command["signal"])
                if sig == signal.SIGTERM and not self.has_handler(target):
                    _emit(
                        {"event": "unhandled_sigterm", "node": self.node_of[target], "pid": target}
                    )
                _send(target, sig, group=bool(command.get("group")))
        elif op == "quit":
            return False
        return True

    def look_for_handlers(self) -> None:
        """Announce each agent whose SIGTERM handler has just appeared."""
        now = time.monotonic()
        if now < self.next_look:
            return
        self.next_look = now + _HANDLER_LOOK_SECONDS
        for pid in [pid for pid in self.node_of if pid not in self.handling]:
            self.has_handler(pid)

    def has_handler(self, pid: int) -> bool:
        """Whether `pid` catches SIGTERM now; the first time it does, say so."""
        if pid in self.handling:
            return True
        if not catches_sigterm(pid):
            return False
        self.handling.add(pid)
        _emit({"event": "handler_ready", "node": self.node_of[pid], "pid": pid})
        return True

    def reap(self, *, block: bool) -> None:
        while self.node_of:
            try:
                pid, status, usage = os.wait4(-1, 0 if block else os.WNOHANG)
            except ChildProcessError:
                self.node_of.clear()
                return
            if pid == 0:
                return
            node = self.node_of.pop(pid, None)
            self.handling.discard(pid)
            if node is None:
                continue
            if self.pid_of.get(node) == pid:
                del self.pid_of[node]
            # What the agent left in its container (an apiclient mid-call) goes with it.
            _send(pid, signal.SIGKILL, group=True)
            _emit(
                {
                    "event": "exited",
                    "node": node,
                    "pid": pid,
                    "code": os.waitstatus_to_exitcode(status),
                    "maxrss_kib": usage.ru_maxrss,
                }
            )

    def kill_all(self) -> None:
        for pid in list(self.node_of):
            _send(pid, signal.SIGKILL, group=True)
        self.reap(block=True)


def _spawn(argv: list[str], env: dict[str, str], log_path: str) -> int:
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    runtime = os.getpid()
    pid = os.fork()
    if pid == 0:  # the agent: its own group, dies with this runtime, output to its log
        try:
            os.setpgid(0, 0)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _die_with_parent()
            if os.getppid() != runtime:
                os._exit(1)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(log, 1)
            os.dup2(log, 2)
            os.closerange(3, 1024)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    os.close(log)
    with contextlib.suppress(OSError):  # the child did it first, or already exited
        os.setpgid(pid, pid)
    return pid


# Without /proc (not Linux) a handler cannot be seen: every agent then counts as handling
# SIGTERM from its start, which keeps the verdict as strict as it was.
_SIGNAL_MASKS_READABLE = Path("/proc/self/status").is_file()


def catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM, from the kernel's mask of caught signals."""
    if not _SIGNAL_MASKS_READABLE:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    for line in status.splitlines():
        if line.startswith("SigCgt:"):
            caught = int(line.split(":", 1)[1].strip() or "0", 16)
            return bool(caught >> (signal.SIGTERM - 1) & 1)
    return False


def _send(pid: int, sig: int, *, group: bool) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _die_with_parent() -> None:
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)


def _emit(event: dict[str, Any]) -> None:
    try:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(1)


if __name__ == "__main__":
    sys.exit(main())
