"""PhaseTimer: how long each phase of a node's update took, as seen from the controller.

Staging runs from the spec asking for StagedAndPerformedUpdate until the agent reports it.
Drain runs from the spec asking for RebootedIntoUpdate until no pod that must leave is left on
the cordoned node; reboot from there until the agent reports RebootedIntoUpdate. The whole
update runs from the start until the agent reports MonitoringUpdate. Each duration is recorded
once; what the controller did not see (e.g. before a restart) is not recorded at all.

A completed update, from the start until the agent reports Idle again on the version it was
started to (having passed MonitoringUpdate), is also kept for `take_completed`: the durations
finishBy learns from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from brupop.domain.cluster.drain_progress import DrainProgress
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState
from brupop.domain.versions import versions_differ
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics, UpdatePhase

_STAGED = UpdateState.STAGED_AND_PERFORMED_UPDATE
_REBOOTED = UpdateState.REBOOTED_INTO_UPDATE


class PhaseTimer:
    """Remembers just enough per node to time its phases."""

    def __init__(self, metrics: RolloutMetrics) -> None:
        self._metrics = metrics
        self._started: dict[str, datetime] = {}
        self._drained: dict[str, datetime] = {}
        self._recorded: dict[str, set[UpdatePhase]] = {}
        self._completed: list[float] = []

    def take_completed(self) -> list[float]:
        """The whole update durations (seconds) completed since the last call."""
        completed, self._completed = self._completed, []
        return completed

    def observe(
        self, shadows: Iterable[Shadow], drains: Mapping[str, DrainProgress], now: datetime
    ) -> None:
        """Look at one consistent list of shadows at `now`."""
        for shadow in shadows:
            self._observe_one(shadow, drains.get(shadow.name), now)

    def _observe_one(self, shadow: Shadow, drain: DrainProgress | None, now: datetime) -> None:
        status, spec, name = shadow.status, shadow.spec, shadow.name
        if status is None:
            return
        stamped = spec.state_transition_timestamp
        if spec.state is UpdateState.IDLE and status.current_state is UpdateState.IDLE:
            started = self._started.get(name)
            monitored = UpdatePhase.UPDATE in self._recorded.get(name, ())
            arrived = spec.version is not None and not versions_differ(
                status.current_version, spec.version
            )
            if started is not None and monitored and arrived:
                self._completed.append(max(0.0, (now - started).total_seconds()))
            self._forget(name)
            return
        if spec.state is _STAGED and stamped is not None:
            self._started.setdefault(name, stamped)
            if status.current_state is _STAGED:
                self._record(name, UpdatePhase.STAGING, now - stamped)
        elif spec.state is _REBOOTED and status.current_state is _STAGED:
            if drain is not None and drain.done and stamped is not None:
                if name not in self._drained:
                    self._drained[name] = now
                self._record(name, UpdatePhase.DRAIN, now - stamped)
        elif spec.state is _REBOOTED and status.current_state is _REBOOTED:
            if name in self._drained:
                self._record(name, UpdatePhase.REBOOT, now - self._drained[name])
        elif status.current_state is UpdateState.MONITORING_UPDATE and name in self._started:
            self._record(name, UpdatePhase.UPDATE, now - self._started[name])

    def _record(self, name: str, phase: UpdatePhase, took: timedelta) -> None:
        done = self._recorded.setdefault(name, set())
        if phase in done:
            return
        done.add(phase)
        self._metrics.observe_phase(phase, max(0.0, took.total_seconds()))

    def _forget(self, name: str) -> None:
        self._started.pop(name, None)
        self._drained.pop(name, None)
        self._recorded.pop(name, None)
