"""LeaderWrites: what one pass writes as leader, once it has decided.

The plan and the gates' verdicts (RolloutWriter), the orphans' cleanup (OptOutCleanup), the
prestage asks (PrestageKeeper) and the autoscaler annotations of the nodes in a slot
(AutoscalerGuard), each written only while the Lease is held, and the failures they met
(RecalledFailures). RolloutPass decides; this writes, and puts what it wrote into the mirror.
"""

from __future__ import annotations

from datetime import datetime

from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.rollout.rollout import RolloutPlan
from brupop.domain.shadow import Shadow
from brupop.domain.starting.version_gate import VersionGate
from brupop.ports.monitoring.safety_metrics import SafetyMetrics
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.controller.runtime.leader_election import LeaderElector
from brupop.services.controller.safety.gate_settling import settle_gates
from brupop.services.controller.safety.rollout_safety import SafetyPass
from brupop.services.controller.starts.autoscaler_guard import AutoscalerGuard
from brupop.services.controller.starts.prestage_keeper import FleetStop, PrestageKeeper
from brupop.services.controller.writing.opt_out_cleanup import OptOutCleanup
from brupop.services.controller.writing.recalled_failures import RecalledFailures
from brupop.services.controller.writing.rollout_writer import RolloutWriter, WriteOutcome


class LeaderWrites:
    """The writes of one replica's passes (leader only), and the mirror kept in step."""

    def __init__(
        self,
        *,
        elector: LeaderElector,
        fleet: FleetMirror,
        writer: RolloutWriter,
        cleanup: OptOutCleanup,
        prestage: PrestageKeeper,
        autoscaler: AutoscalerGuard,
        failures: RecalledFailures,
        metrics: SafetyMetrics,
    ) -> None:
        self._elector = elector
        self._fleet = fleet
        self._writer = writer
        self._cleanup = cleanup
        self._prestage = prestage
        self._autoscaler = autoscaler
        self._failures = failures
        self._metrics = metrics
        self._told_quarantined: frozenset[str] = frozenset()

    def lag_behind(self, leading: bool) -> bool:
        """The mirror still shows one of this replica's writes undone, so a pass would decide
        from the past; a follower's writes are history, and it waits on none of them."""
        if not leading:
            self._writer.forget_writes()
        return self._writer.writes_unseen(self._fleet.shadows.get)

    def tell_quarantined(self, leading: bool) -> None:
        """A log line and an Event (leader only) for each shadow newly set aside."""
        book = self._fleet.book
        quarantined = book.quarantined()
        if leading:
            for name in quarantined.keys() - self._told_quarantined:
                if (shadow := book.shadow(name)) is not None:
                    self._writer.note_quarantined(shadow, quarantined[name])
        self._told_quarantined = frozenset(quarantined) if leading else frozenset()

    def sweep(self, now: datetime) -> set[str]:
        """Clean up the orphans; the names of the shadows touched."""
        orphans = self._fleet.orphan_shadows()
        staying = {s.name for s in self._cleanup.sweep(orphans, [])}
        gone = {s.name for s in orphans} - staying
        self._fleet.removed(gone)
        return self._fleet.absorb(now) | gone

    def withdraw_prestage(
        self, plan: RolloutPlan, in_force: EffectivePolicy, now: datetime, *, stopped: bool
    ) -> RolloutPlan:
        """The plan without the starts of nodes still asked to prepare ahead (when prestaging
        is on)."""
        if in_force.prestage is None or not in_force.prestage.enabled:
            return plan
        holders = shadows_named(self._fleet, self._fleet.book.holders())
        return self._prestage.withdraw(plan, holders, in_force, stopped=stopped, now=now)

    def write(self, plan: RolloutPlan, safety: SafetyPass, now: datetime) -> WriteOutcome:
        """Write the plan and the gates' verdicts."""
        outcome = self._writer.apply(plan, now, self._elector.is_leader)
        self._failures.timed_out(outcome.timed_out)
        if not outcome.stopped_leading:
            settle_gates(safety, outcome, self._writer, self._metrics, now)
            self._failures.gate_failed(outcome.gate_failed)
        return outcome

    def keep_prestage(
        self,
        in_force: EffectivePolicy,
        stop: FleetStop,
        versions: VersionGate,
        now: datetime,
    ) -> set[str]:
        """Ask Idle nodes to prepare ahead, or stop asking; the shadows touched."""
        book = self._fleet.book
        fleet = (s for n in book.names() if (s := book.shadow(n)) is not None)
        written = self._prestage.keep(
            fleet, in_force, stop, now, self._elector.is_leader, versions=versions
        )
        return self.absorb(written.stored, written.conflicted, now)

    def absorb(self, stored: list[Shadow], conflicted: list[str], now: datetime) -> set[str]:
        """Put what was written (or met a conflict) into the mirror; the shadows touched."""
        if not (stored or conflicted):
            return set()
        self._fleet.written(stored, conflicted)
        return self._fleet.absorb(now)

    def guard_nodes(self, leading: bool, started: set[str]) -> None:
        """The autoscaler annotations on the nodes holding a slot (from the moment they start),
        what was there before on the others."""
        leading = leading and self._elector.is_leader()
        book = self._fleet.book
        names = book.holders() | started if leading else set()
        holding = {s.node_name for n in names if (s := book.shadow(n)) is not None}
        self._autoscaler.keep(holding, leading=leading)

    def forget_old_failures(self, now: datetime) -> None:
        """Forget the failures of nodes long past them."""
        self._failures.forget_old(self._fleet.book, now)


def shadows_named(fleet: FleetMirror, names: set[str]) -> list[Shadow]:
    """The shadows of `names` the mirror's book holds, by name."""
    book = fleet.book
    return [s for n in sorted(names) if (s := book.shadow(n)) is not None]
