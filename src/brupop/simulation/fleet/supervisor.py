"""AgentSupervisor: one agent OS process per node, restarted whenever it exits, as a kubelet would.

The processes themselves run under a small container runtime process (`runtime.py`), which
gives each agent its own process group and log file and reaps it with `os.wait4`, so the OS's
accounting of the finished agent gives its true peak RSS. The supervisor decides: when to
start, when to restart (with a short, growing backoff), what to signal, and why each exit came.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

from brupop.domain.retry_backoff import Backoff

_POLL_SECONDS = 0.02
_HEALTHY_RUN_SECONDS = 5.0  # a run this long resets the restart backoff
RUNTIME_MODULE = "brupop.simulation.fleet.runtime"


class ExitCause(StrEnum):
    """Why an agent process ended, when the harness knows."""

    ON_ITS_OWN = "own"  # the agent exited, or something else (a reboot) ended it
    CHAOS_SIGTERM = "chaos-sigterm"
    CHAOS_SIGKILL = "chaos-sigkill"
    SHUTDOWN = "shutdown"
    SHUTDOWN_KILLED = "shutdown-killed"  # it ignored SIGTERM past the grace period


@dataclass(frozen=True)
class AgentProcessExit:
    """One finished agent process."""

    pid: int
    code: int  # the exit status, or minus the signal number that ended it
    peak_rss_kib: int
    ran_seconds: float
    cause: ExitCause
    ended_at: float = 0.0  # time.monotonic() when the harness heard of it
    # The harness sent SIGTERM while the process had no handler for it yet: an interpreter
    # still starting, before any code of the agent's could run.
    sigterm_before_handler: bool = False

    @property
    def acceptable(self) -> bool:
        """Exit 0 (a SIGTERM included: the agent must handle it), the chaos SIGKILL, or a
        SIGTERM death the harness caused by signalling before the agent could handle it."""
        if self.code == -signal.SIGTERM:
            return self.sigterm_before_handler
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
    running: bool = False
    pid: int | None = None
    started_at: float = 0.0
    starts: int = 0
    exits: list[AgentProcessExit] = field(default_factory=list)
    cause: ExitCause = ExitCause.ON_ITS_OWN
    next_start_at: float = 0.0
    quick_exits: int = 0
    log_size_at_start: int = 0
    handler_ready: bool = False  # the runtime saw its SIGTERM handler
    sigterm_before_handler: bool = False


@dataclass(frozen=True)
class AgentView:
    """What the harness knows about one node's agent right now."""

    node: str
    running: bool
    pid: int | None
    starts: int
    exits: tuple[AgentProcessExit, ...]

    @property
    def restarts(self) -> int:
        return max(0, self.starts - 1)


class AgentSupervisor:
    """Starts, watches, restarts and finally stops every node's agent process."""

    def __init__(
        self, specs: Sequence[AgentSpec], *, restart_backoff: float, restart_backoff_max: float
    ) -> None:
        self._slots = {spec.node: _Slot(spec) for spec in specs}
        self._backoff = Backoff(restart_backoff, restart_backoff_max)
        self._grace = 5.0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._runtime: subprocess.Popen[bytes] | None = None
        self._thread = threading.Thread(target=self._run, name="agent-supervisor", daemon=True)
        self._reader = threading.Thread(target=self._read, name="runtime-events", daemon=True)

    def start(self) -> None:
        self._runtime = subprocess.Popen(
            [sys.executable, "-m", RUNTIME_MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            process_group=0,
            close_fds=True,
        )
        self._reader.start()
        self._thread.start()

    def views(self) -> dict[str, AgentView]:
        with self._lock:
            return {name: _view(slot) for name, slot in self._slots.items()}

    def running_nodes(self, *, ready: bool = False) -> list[str]:
        """Nodes whose agent runs now; with `ready`, only those past their start-up: their
        SIGTERM handler is in place and they have logged since they started."""
        with self._lock:
            running = [s for s in self._slots.values() if s.running and s.pid is not None]
            handling = {s.spec.node for s in running if s.handler_ready}
        return [
            slot.spec.node
            for slot in running
            if not ready or (slot.spec.node in handling and _has_logged(slot))
        ]

    def signal_agent(self, node: str, sig: signal.Signals) -> bool:
        """Chaos: SIGTERM the agent (as a kubelet stops a container) or SIGKILL its group."""
        with self._lock:
            slot = self._slots[node]
            already_signalled = slot.cause is not ExitCause.ON_ITS_OWN
            if not slot.running or slot.pid is None or already_signalled:
                return False
            if self._stopping.is_set():
                return False
            slot.cause = (
                ExitCause.CHAOS_SIGKILL if sig is signal.SIGKILL else ExitCause.CHAOS_SIGTERM
            )
            self._command(
                {"op": "signal", "node": node, "signal": int(sig), "group": sig is signal.SIGKILL}
            )
            return True

    def stop(self, grace_seconds: float = 5.0) -> None:
        """Stop restarting; SIGTERM every agent, SIGKILL the groups still there after `grace`."""
        self._grace = grace_seconds
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        if self._reader.is_alive():
            self._reader.join()
        runtime = self._runtime
        if runtime is not None and runtime.stdout is not None:
            runtime.stdout.close()  # the reader has read it to its end

    # --- the supervisor thread: decides starts and restarts ----------------------------------

    def _run(self) -> None:
        while not self._stopping.is_set() and self._reader.is_alive():
            now = time.monotonic()
            with self._lock:
                for slot in self._slots.values():
                    if not slot.running and now >= slot.next_start_at:
                        self._spawn(slot, now)
            self._stopping.wait(_POLL_SECONDS)
        self._shut_down()

    def _spawn(self, slot: _Slot, now: float) -> None:
        spec = slot.spec
        self._command(
            {
                "op": "spawn",
                "node": spec.node,
                "argv": list(spec.argv),
                "env": dict(spec.env),
                "log": str(spec.log_path),
            }
        )
        slot.running, slot.pid = True, None
        slot.log_size_at_start = _size(spec.log_path)
        slot.started_at = now
        slot.starts += 1
        slot.cause = ExitCause.ON_ITS_OWN
        slot.handler_ready = slot.sigterm_before_handler = False

    def _shut_down(self) -> None:
        with self._lock:
            for slot in self._slots.values():
                if slot.running:
                    slot.cause = ExitCause.SHUTDOWN
                    self._command({"op": "signal", "node": slot.spec.node, "signal": 15})
        self._wait_for_exits(self._grace)
        with self._lock:
            for slot in self._slots.values():
                if slot.running:
                    slot.cause = ExitCause.SHUTDOWN_KILLED
                    self._command(
                        {"op": "signal", "node": slot.spec.node, "signal": 9, "group": True}
                    )
        self._wait_for_exits(self._grace)
        self._command({"op": "quit"})
        runtime = self._runtime
        if runtime is not None:
            if runtime.stdin is not None:
                runtime.stdin.close()
            runtime.wait()

    def _wait_for_exits(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while self._any_running() and time.monotonic() < deadline and self._reader.is_alive():
            time.sleep(_POLL_SECONDS)

    def _any_running(self) -> bool:
        with self._lock:
            return any(slot.running for slot in self._slots.values())

    def _command(self, command: dict[str, Any]) -> None:
        runtime = self._runtime
        if runtime is None or runtime.stdin is None:
            return
        try:
            runtime.stdin.write((json.dumps(command) + "\n").encode())
            runtime.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the runtime is gone; the reader notices

    # --- the reader thread: what the runtime reports ---------------------------------------

    def _read(self) -> None:
        runtime = self._runtime
        stream: IO[bytes] | None = runtime.stdout if runtime is not None else None
        if stream is None:
            return
        with stream:  # closed at the runtime's end, not left to the garbage collector
            for raw in stream:
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                self._on_event(event, time.monotonic())
        with self._lock:  # the runtime ended: whatever still ran went with it
            for slot in self._slots.values():
                slot.running = False

    def _on_event(self, event: dict[str, Any], now: float) -> None:
        with self._lock:
            slot = self._slots.get(str(event.get("node")))
            if slot is None:
                return
            kind = event.get("event")
            if kind == "started":
                slot.pid = int(event["pid"])
                return
            if kind in ("handler_ready", "unhandled_sigterm"):
                if slot.pid == int(event["pid"]):
                    slot.handler_ready |= kind == "handler_ready"
                    slot.sigterm_before_handler |= kind == "unhandled_sigterm"
                return
            if kind != "exited":
                return
            ran = now - slot.started_at
            slot.exits.append(
                AgentProcessExit(
                    pid=int(event["pid"]),
                    code=int(event["code"]),
                    peak_rss_kib=int(event["maxrss_kib"]),
                    ran_seconds=ran,
                    cause=exit_cause(slot.cause, int(event["code"])),
                    ended_at=now,
                    sigterm_before_handler=slot.sigterm_before_handler,
                )
            )
            slot.running, slot.pid = False, None
            slot.quick_exits = 0 if ran >= _HEALTHY_RUN_SECONDS else slot.quick_exits + 1
            slot.next_start_at = now + self._backoff.delay(slot.quick_exits)


def exit_cause(intended: ExitCause, code: int) -> ExitCause:
    """Why an agent ended: what the harness did to it, unless that cannot have ended it. A
    chaos SIGKILL that reaches a process already gone (it exited on its own, say for its
    reboot, as the kill was on its way) ends nothing: the exit is the agent's own."""
    if intended is ExitCause.CHAOS_SIGKILL and code != -signal.SIGKILL:
        return ExitCause.ON_ITS_OWN
    return intended


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _has_logged(slot: _Slot) -> bool:
    return _size(slot.spec.log_path) > slot.log_size_at_start


def _view(slot: _Slot) -> AgentView:
    return AgentView(
        node=slot.spec.node,
        running=slot.running,
        pid=slot.pid,
        starts=slot.starts,
        exits=tuple(slot.exits),
    )
