"""FleetObserver: watches every shadow change in-process and keeps the fleet's story.

It replays the cluster's watch event by event, so it sees each intermediate state: the most
nodes outside Idle at once (a node counts when its spec.state or status.current_state is not
Idle), how long each node spent on each desired state, and when anything last changed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import structlog

from brupop.domain.cluster.objects import WatchEvent, WatchEventType
from brupop.domain.planning.virtual_rollout import staged_ahead
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.errors import PortError, WatchExpiredError
from brupop.services.runtime.supervisor import Supervisor

log = structlog.get_logger(__name__)

_WATCH_SECONDS = 0.5
_RETRY_SECONDS = 0.2
MAX_HISTORY = 100_000  # changes kept for the timeline: a 500-node fleet makes a few thousand


@dataclass(frozen=True)
class NodeViewChange:
    """One node's view before and after a change, at `at` (time.monotonic())."""

    at: float
    before: NodeView
    after: NodeView


@dataclass(frozen=True)
class NodeView:
    """One node's shadow as last seen, and the time it spent per desired state."""

    node: str
    spec_state: UpdateState | None = None
    status_state: UpdateState | None = None
    current_version: str | None = None
    target_version: str | None = None
    crash_count: int = 0
    failing_since: str | None = None
    times_started: int = 0
    phase_seconds: dict[str, float] = field(default_factory=dict)
    phase_since: float | None = None
    started_at: float | None = None
    """When (monotonic) the node first left Idle."""
    finished_at: float | None = None
    """When (monotonic) the node last came back to Idle."""
    preparing_ahead: bool = False
    """Asked to prepare its version ahead of its turn, and its host does not hold it yet."""

    @property
    def active(self) -> bool:
        """Outside Idle: it holds one of the rollout's slots."""
        return (self.spec_state is not None and self.spec_state is not UpdateState.IDLE) or (
            self.status_state is not None and self.status_state is not UpdateState.IDLE
        )

    def phase(self, target_version: str) -> str:
        """A short word for what the node is doing."""
        if self.status_state is None:
            return "starting"
        if self.status_state is UpdateState.ERROR_RESET:
            return "error-reset"
        if not self.active:
            if self.current_version == target_version:
                return "updated"
            return "backoff" if self.failing_since else "waiting"
        if self.spec_state == self.status_state:
            return f"reached {self.status_state}"
        return _WORKING.get(self.spec_state or UpdateState.IDLE, "working")


_WORKING = {
    UpdateState.STAGED_AND_PERFORMED_UPDATE: "staging",
    UpdateState.REBOOTED_INTO_UPDATE: "rebooting",
    UpdateState.MONITORING_UPDATE: "monitoring",
    UpdateState.IDLE: "finishing",
}


class FleetObserver:
    """A thread that follows the shadows' watch and records the fleet's concurrency."""

    def __init__(
        self,
        shadows: ShadowRepository,
        nodes: list[str],
        on_change: Callable[[NodeView, NodeView], None] | None = None,
    ) -> None:
        self._shadows = shadows
        self._views = {name: NodeView(node=name) for name in nodes}
        self.on_change = on_change
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # Whatever else the watch raises (a bug), the observer goes on: it is restarted.
        self._supervisor = Supervisor("fleet-observer", self._run, self._stop)
        self._thread: threading.Thread | None = None
        self._version: str | None = None  # where the watch resumes, after a restart too
        self.max_active = 0
        self.first_active_at: float | None = None
        self.all_reported_at: float | None = None
        self.last_change_at = time.monotonic()
        self._history: list[NodeViewChange] = []

    def start(self) -> None:
        self._thread = self._supervisor.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join()

    def views(self) -> dict[str, NodeView]:
        with self._lock:
            return dict(self._views)

    def history(self) -> list[NodeViewChange]:
        """Every state change seen so far, oldest first (at most MAX_HISTORY)."""
        with self._lock:
            return list(self._history)

    def active_count(self) -> int:
        with self._lock:
            return sum(view.active for view in self._views.values())

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if self._version is None:
                    listing = self._shadows.list()
                    for shadow in listing.items:
                        self._see(shadow)
                    self._version = listing.resource_version
                for event in self._shadows.watch(self._version, _WATCH_SECONDS):
                    self._version = event.resource_version or self._version
                    if isinstance(event, WatchEvent) and event.type is not WatchEventType.DELETED:
                        self._see(event.object)
                    if self._stop.is_set():
                        break
            except WatchExpiredError:
                self._version = None
            except PortError as error:
                # A cluster that answers late (a real API under load) ends this watch only:
                # resume from the last version seen, so no intermediate state is skipped.
                log.info("observer.watch_failed", error=str(error)[:200])
                self._stop.wait(_RETRY_SECONDS)

    def _see(self, shadow: Shadow) -> None:
        now = time.monotonic()
        with self._lock:
            before = self._views.get(shadow.node_name)
            if before is None:
                return
            after = _advance(before, shadow, now)
            if _state_of(after) == _state_of(before):
                self._views[shadow.node_name] = after
                return
            self._views[shadow.node_name] = after
            self.last_change_at = now
            if len(self._history) < MAX_HISTORY:
                self._history.append(NodeViewChange(now, before, after))
            active = sum(v.active for v in self._views.values())
            self.max_active = max(self.max_active, active)
            if active and self.first_active_at is None:
                self.first_active_at = now
            if self.all_reported_at is None and all(
                v.status_state is not None for v in self._views.values()
            ):
                self.all_reported_at = now
        if self.on_change is not None:
            self.on_change(before, after)


def _advance(view: NodeView, shadow: Shadow, now: float) -> NodeView:
    status = shadow.status
    updated = replace(
        view,
        spec_state=shadow.spec.state,
        status_state=status.current_state if status else None,
        current_version=status.current_version if status else None,
        target_version=status.target_version if status else None,
        crash_count=status.crash_count if status else 0,
        failing_since=(
            status.state_transition_failure_timestamp.isoformat()
            if status and status.state_transition_failure_timestamp
            else None
        ),
        preparing_ahead=_preparing_ahead(shadow),
    )
    phases = dict(view.phase_seconds)
    if view.active and view.phase_since is not None and view.spec_state is not None:
        key = str(view.spec_state)
        phases[key] = phases.get(key, 0.0) + (now - view.phase_since)
    starts = updated.active and not view.active
    return replace(
        updated,
        phase_seconds=phases,
        phase_since=now if updated.active else None,
        times_started=view.times_started + (1 if starts else 0),
        started_at=now if starts and view.started_at is None else view.started_at,
        finished_at=now if view.active and not updated.active else view.finished_at,
    )


def _state_of(view: NodeView) -> tuple[object, ...]:
    return (
        view.spec_state,
        view.status_state,
        view.current_version,
        view.target_version,
        view.crash_count,
        view.preparing_ahead,
    )


def _preparing_ahead(shadow: Shadow) -> bool:
    asked, status = shadow.spec.prestage_version, shadow.status
    return asked is not None and status is not None and not staged_ahead(status, asked)


MAX_INTERVALS = 100  # per node; a node failing and starting again adds one per attempt


def active_intervals(
    history: Sequence[NodeViewChange], origin: float
) -> dict[str, list[tuple[float, float | None]]]:
    """Per node, each span it spent outside Idle as `(from, to)` in seconds since `origin`
    (monotonic), in order; `to` is None for a span still open at the end of `history`."""
    spans: dict[str, list[tuple[float, float | None]]] = {}
    for change in history:
        began = change.after.active and not change.before.active
        ended = change.before.active and not change.after.active
        node = spans.setdefault(change.after.node, [])
        at = round(change.at - origin, 3)
        if began and len(node) < MAX_INTERVALS:
            node.append((at, None))
        elif ended and node and node[-1][1] is None:
            node[-1] = (node[-1][0], at)
    return spans
