"""AgentSupervisor: one agent OS process per node, restarted whenever it exits, as a kubelet would.

Each agent runs in its own process group (its "container"), writes to its own log file, and is
reaped with `os.wait4` so the OS's accounting of the finished process gives its peak RSS.
Every exit is recorded with its code and, when the harness caused it, why.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

_POLL_SECONDS = 0.02
_HEALTHY_RUN_SECONDS = 5.0  # a run this long resets the restart backoff


class ExitCause(StrEnum):
    """Why an agent process ended, when the harness knows."""

    ON_ITS_OWN = "own"  # the agent exited, or something else (a reboot) ended it
    CHAOS_SIGTERM = "chaos-sigterm"
    CHAOS_SIGKILL = "chaos-sigkill"
    SHUTDOWN = "shutdown"
    SHUTDOWN_KILLED = "shutdown-killed"  # it ignored SIGTERM past the grace period


@dataclass(frozen=True)
class AgentExit:
    """One finished agent process."""

    pid: int
    code: int  # the exit status, or minus the signal number that ended it
    peak_rss_kib: int
    ran_seconds: float
    cause: ExitCause

    @property
    def acceptable(self) -> bool:
        """Exit 0, or the SIGKILL the chaos monkey itself sent."""
        return self.code == 0 or (
            self.cause is ExitCause.CHAOS_SIGKILL and self.code == -signal.SIGKILL
        )


@dataclass(frozen=True)
class AgentSpec:
    """How to start one node's agent."""

    node: str
    argv: Sequence[str]
    env: Mapping[str, str]
    log_path: Path


@dataclass
class _Slot:
    spec: AgentSpec
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    starts: int = 0
    exits: list[AgentExit] = field(default_factory=list)
    cause: ExitCause = ExitCause.ON_ITS_OWN
    next_start_at: float = 0.0
    quick_exits: int = 0


@dataclass(frozen=True)
class AgentView:
    """What the harness knows about one node's agent right now."""

    node: str
    running: bool
    pid: int | None
    starts: int
    exits: tuple[AgentExit, ...]

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)


class AgentSupervisor:
    """Starts, watches, restarts and finally stops every node's agent process."""

    def __init__(
        self,
        specs: Sequence[AgentSpec],
        *,
        restart_backoff: float,
        restart_backoff_max: float,
        guard: bool = True,
    ) -> None:
        self._slots = {spec.node: _Slot(spec) for spec in specs}
        self._backoff = restart_backoff
        self._backoff_max = restart_backoff_max
        self._guard = guard
        self._lock = threading.Lock()
        self._grace = 5.0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="agent-supervisor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def views(self) -> dict[str, AgentView]:
        with self._lock:
            return {name: _view(slot) for name, slot in self._slots.items()}

    def running_nodes(self) -> list[str]:
        with self._lock:
            return [name for name, slot in self._slots.items() if slot.process is not None]

    def signal_agent(self, node: str, sig: signal.Signals) -> bool:
        """Chaos: SIGTERM the agent (as a kubelet stops a container) or SIGKILL its group."""
        with self._lock:
            slot = self._slots[node]
            if slot.process is None or self._stopping.is_set():
                return False
            slot.cause = (
                ExitCause.CHAOS_SIGKILL if sig is signal.SIGKILL else ExitCause.CHAOS_SIGTERM
            )
            _send(slot.process.pid, sig, group=sig is signal.SIGKILL)
            return True

    def stop(self, grace_seconds: float = 5.0) -> None:
        """Stop restarting; SIGTERM every agent, SIGKILL the groups still there after `grace`.

        The supervisor thread does it: it forked the agents, and they die with it."""
        self._grace = grace_seconds
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()

    # --- the supervisor thread: the only one that forks and reaps ----------------------------

    def _run(self) -> None:
        while not self._stopping.is_set():
            now = time.monotonic()
            self._reap_all(now)
            with self._lock:
                for slot in self._slots.values():
                    if slot.process is None and now >= slot.next_start_at:
                        self._spawn(slot, now)
            self._stopping.wait(_POLL_SECONDS)
        self._shut_down()

    def _shut_down(self) -> None:
        with self._lock:
            for slot in self._slots.values():
                if slot.process is not None:
                    slot.cause = ExitCause.SHUTDOWN
                    _send(slot.process.pid, signal.SIGTERM, group=False)
        deadline = time.monotonic() + self._grace
        while time.monotonic() < deadline and self.running_nodes():
            self._reap_all(time.monotonic())
            time.sleep(_POLL_SECONDS)
        with self._lock:
            for slot in self._slots.values():
                if slot.process is not None:
                    slot.cause = ExitCause.SHUTDOWN_KILLED
                    _send(slot.process.pid, signal.SIGKILL, group=True)
        while self.running_nodes():
            self._reap_all(time.monotonic(), block=True)

    def _spawn(self, slot: _Slot, now: float) -> None:
        spec = slot.spec
        argv = list(spec.argv)
        env = dict(spec.env)
        if self._guard:
            argv = [sys.executable, "-m", "brupop.entrypoints.simulate.orphan_guard", *argv]
            env["BRUPOP_SIM_PARENT_PID"] = str(os.getpid())
        with spec.log_path.open("ab") as log:
            slot.process = subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                process_group=0,
                close_fds=True,
            )
        slot.started_at = now
        slot.starts += 1
        slot.cause = ExitCause.ON_ITS_OWN

    def _reap_all(self, now: float, *, block: bool = False) -> None:
        with self._lock:
            slots = [slot for slot in self._slots.values() if slot.process is not None]
        for slot in slots:
            self._reap(slot, now, block=block)

    def _reap(self, slot: _Slot, now: float, *, block: bool) -> None:
        process = slot.process
        if process is None:
            return
        try:
            pid, status, usage = os.wait4(process.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            pid, status, usage = process.pid, 0, None
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status) if usage is not None else 0
        process.returncode = code
        with self._lock:
            ran = now - slot.started_at
            slot.exits.append(
                AgentExit(
                    pid=pid,
                    code=code,
                    peak_rss_kib=int(usage.ru_maxrss) if usage is not None else 0,
                    ran_seconds=ran,
                    cause=slot.cause,
                )
            )
            slot.process = None
            slot.quick_exits = 0 if ran >= _HEALTHY_RUN_SECONDS else slot.quick_exits + 1
            delay = min(self._backoff_max, self._backoff * 2 ** max(0, slot.quick_exits - 1))
            slot.next_start_at = now + delay
        # Whatever the agent left in its group (an apiclient mid-call) goes with its container.
        _send(pid, signal.SIGKILL, group=True)


def _view(slot: _Slot) -> AgentView:
    return AgentView(
        node=slot.spec.node,
        running=slot.process is not None,
        pid=slot.process.pid if slot.process is not None else None,
        starts=slot.starts,
        exits=tuple(slot.exits),
    )


def _send(pid: int, sig: signal.Signals, *, group: bool) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
