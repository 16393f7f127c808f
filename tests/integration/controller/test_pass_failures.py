"""The controller's real loop never dies of a pass: a made-up bug in every pass is one ERROR
line with its traceback, counted; nothing starts; the Lease stays renewed; and the rollout
goes on as soon as the bug is gone."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from structlog.testing import capture_logs

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.clock import SystemClock
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import build_controller
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.replica import ControllerMetrics
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME
from brupop.services.controller.service import ControllerService
from tests.integration.controller.running import running
from tests.support.polling import wait_until
from tests.unit.services.controller.fleet import RecordingMetrics

LEASE_SECONDS = 1.5  # renewed every 0.5 s: a streak of a few seconds spans many renewals
IDENTITY = "c1"


@dataclass
class BuggyMetrics(RecordingMetrics):
    """Metrics whose concurrency gauge raises while `broken`: a bug met mid-pass, before the
    pass writes anything."""

    broken: bool = True

    def set_concurrency_limit(self, maximum: int | None) -> None:
        if self.broken:
            raise RuntimeError("made-up bug in the pass")
        super().set_concurrency_limit(maximum)


def _cluster(nodes: int) -> InMemoryCluster:
    cluster = InMemoryCluster(clock=SystemClock())
    for i in range(nodes):
        name = f"node-{i:02d}"
        node = cluster.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE})
        cluster.shadows.create(name, node.uid)
        status = ShadowStatus(
            current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
        )
        cluster.shadows.update_status(shadow_name(name), status)
    return cluster


def _controller(cluster: InMemoryCluster, metrics: BuggyMetrics) -> ControllerService:
    clock = SystemClock()
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(3)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=cluster.namespace,
        identity=IDENTITY,
        tick_seconds=0.05,
        lease_seconds=LEASE_SECONDS,
        renew_seconds=LEASE_SECONDS / 3,
        watch_seconds=1.0,
    )
    return build_controller(
        cluster, config, clock, ControllerMetrics(rollout=metrics, safety=metrics)
    )


def _started(cluster: InMemoryCluster) -> int:
    return sum(1 for s in cluster.shadows.list().items if s.spec.state is not UpdateState.IDLE)


def _renewals(cluster: InMemoryCluster, seen: set[datetime]) -> int:
    """How many renewals of the Lease by c1 `seen` holds, with the one now (c1 must hold it)."""
    lease = cluster.leases.get(cluster.namespace, DEFAULT_LEASE_NAME)
    assert lease.holder == IDENTITY
    assert lease.renewed_at is not None
    seen.add(lease.renewed_at)
    return len(seen)


def _errors(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [line for line in logs if line["log_level"] == "error"]


def test_a_bug_in_every_pass_fails_closed_keeps_the_lease_and_the_rollout_resumes() -> None:
    cluster = _cluster(3)
    metrics = BuggyMetrics()
    with capture_logs() as logs, running(_controller(cluster, metrics)) as loop:
        wait_until(lambda: metrics.pass_failures >= 3, "three failed passes")
        renewals: set[datetime] = set()
        # Six renewals (three seconds on an idle machine) of failing passes, retries backing off.
        wait_until(lambda: _renewals(cluster, renewals) >= 6, "six renewals of the Lease")

        assert loop.thread.is_alive()
        assert _started(cluster) == 0, "a failed pass wrote a spec"
        assert metrics.leading is True
        failures_seen = metrics.pass_failures
        (error,) = _errors(logs)  # one line for the whole streak
        assert error["event"] == "controller.pass_failed"
        assert error["error"] == "RuntimeError"
        assert isinstance(error["exc_info"], RuntimeError)  # rendered as its traceback

        metrics.broken = False
        wait_until(lambda: _started(cluster) == 3, "the rollout resumed", seconds=40)

    assert failures_seen < 20, "the retries did not back off"
    assert [line["event"] for line in logs].count("controller.pass_recovered") == 1
    assert len(_errors(logs)) == 1
