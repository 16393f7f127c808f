"""ControllerConfig: the settings the controller service runs with, already validated."""

from __future__ import annotations

from dataclasses import dataclass

from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME
from brupop.services.runtime.informer import WATCH_SECONDS
from brupop.services.runtime.supervisor import RestartSchedule


@dataclass(frozen=True)
class ControllerConfig:
    """Policy, schedule and timing of one controller replica."""

    rollout_rules: RolloutRules
    window: MaintenanceWindow
    namespace: str
    identity: str
    tick_seconds: float = 2.0
    lease_seconds: float = 15.0
    renew_seconds: float = 5.0
    lease_name: str = DEFAULT_LEASE_NAME
    watch_seconds: float = WATCH_SECONDS
    """How long each watch stays open at least (up to twice that); bookmarks keep it current."""
    settle_seconds: float = 0.05
    passes_per_tick: int = 3
    resync_seconds: float = 600.0
    catch_up_by_list: bool = False
    """When `tick()` is called without `run()` (tests, benchmarks) the mirrors catch up by
    polling the watch without waiting, which the in-memory cluster can do; True catches up by
    a list instead (a Kubernetes watch cannot be polled without waiting)."""
    watch_restart: RestartSchedule | None = None
    """How the change watch is restarted when it fails; None: the watch's own default."""
    variant_offer_grace_seconds: float = 6 * 3600.0
    """How long a variant may see no offer while others do before its nodes say so."""
    release_age_quorum: int | None = None
    """The nodes that must report a version before its release age starts (RELEASE_AGE_QUORUM);
    None: 10 % of the opted-in nodes, at least 2 (`release_quorum`)."""

    @property
    def gate_check_budget_seconds(self) -> float:
        """Gate checks get half the time a leader may go without renewing its Lease."""
        return max(1.0, (self.lease_seconds - self.renew_seconds) / 2)

    @property
    def kubernetes_timeout_seconds(self) -> float:
        """The longest one wait of a Kubernetes call may take (connecting, then each read):
        half the time a leader may go without renewing, at most 30 s, so one stalled read
        leaves a pass the other half to end in and renew."""
        return min(30.0, max(0.5, (self.lease_seconds - self.renew_seconds) / 2))

    @property
    def lease_timeout_seconds(self) -> float:
        """The longest one wait of a Lease call may take: a renew (a read, then a write) ends
        before the next one is due, and never outlasts the other calls' timeout."""
        return min(self.kubernetes_timeout_seconds, max(0.25, self.renew_seconds / 2))
