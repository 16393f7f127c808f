"""PolicyRules: the update policy's part of a controller pass.

Before deciding: apply the policy changes seen since the last pass (the pause), take over or
release a halt as the policy's status shows it, take the canaries it keeps, read back the
learned update durations, and assess the safety rules and the clock's rules (windows,
blackouts, finishBy: `schedule`).
After: publish the fleet's pause and halt metrics and, as leader, the policy's status (with
the update durations measured). With no `default` object the pass is as it was before
policies."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from brupop.domain.reporting.policy_status import FleetProgress
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.starting.budget_rule import BudgetUse
from brupop.domain.starting.version_gate import VersionStanding
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.ports.monitoring.rollout_metrics import RolloutMetrics
from brupop.ports.monitoring.safety_metrics import SafetyMetrics
from brupop.services.controller.policy.policy_follower import PolicyFollower
from brupop.services.controller.safety.rollout_safety import RolloutSafety, SafetyPass
from brupop.services.controller.starts.offered_versions import OfferedVersions
from brupop.services.controller.starts.start_timing import ScheduleGate, StartTiming


class PolicyRules:
    """The pause, the safety rules and the status of the policy in force."""

    def __init__(
        self,
        follower: PolicyFollower,
        safety: RolloutSafety,
        versions: OfferedVersions,
        metrics: RolloutMetrics,
        safety_metrics: SafetyMetrics,
    ) -> None:
        self.follower = follower
        self.safety = safety
        self.versions = versions
        self._metrics = metrics
        self._safety_metrics = safety_metrics
        self.timing = StartTiming()

    def assess(
        self, now: datetime, book: RolloutBook, touched: set[str], *, leading: bool
    ) -> tuple[bool, SafetyPass]:
        """Whether the fleet is paused, and the safety rules' facts of this pass."""
        follower = self.follower
        follower.absorb(leading=leading)
        paused = follower.policy.paused
        self._metrics.set_fleet_paused(paused)
        status, version = follower.status_seen()
        self.safety.halts.follow_status(status, version)
        self.safety.canaries.follow_status(status)
        self.timing.follow_status(status)
        present = version is not None
        self.versions.follow(
            status, present=present, offered=book.targets, fleet=len(book), now=now
        )
        return paused, self.safety.assess(now, follower.policy, book, touched, leading=leading)

    def schedule(self, window: MaintenanceWindow, window_open: bool, now: datetime) -> ScheduleGate:
        """What the clock allows in this pass (`window_open`: the environment window's gate)."""
        return self.timing.gate(self.follower.policy, window, window_open=window_open, now=now)

    def measured(self, durations: Iterable[float], *, leading: bool) -> None:
        """Updates completed in this pass (their whole durations, seconds)."""
        self.timing.measured(durations, leading=leading)

    def publish(
        self,
        book: RolloutBook,
        updating: int,
        paused: bool,
        safety: SafetyPass,
        now: datetime,
        *,
        leading: bool,
        budgets: tuple[BudgetUse, ...] = (),
    ) -> None:
        """The fleet's metrics, and (leader only) the policy's status (`budgets`: the
        budgets' groups in use)."""
        self._safety_metrics.set_fleet(paused=paused, halted=safety.halt.halted)
        if not leading:
            return
        progress = FleetProgress(
            book.states,
            updating,
            book.waiting,
            halt=safety.halt,
            halted_at=safety.halted_at,
            blocked=safety.alerts.reason,
            soak=safety.soak,
            durations=self.timing.history.seconds,
            versions_seen=self.versions.seen,
            budgets=budgets,
        )
        written = self.follower.publish_status(progress, now)
        if written is not None and written.status is not None:
            self.safety.halts.shown(written.status, written.resource_version)
            self.timing.written(written.status)

    def version_standings(self, book: RolloutBook, now: datetime) -> list[VersionStanding]:
        """Each recorded version: first seen, eligible at, nodes offered it, what holds them."""
        policy = self.follower.policy.scheduling.version
        offered: Counter[str] = Counter(
            facts.target_version
            for name in book.names()
            if (facts := book.facts(name)) is not None and facts.offered
        )
        return self.versions.standings(policy, offered, now)
