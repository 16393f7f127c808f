"""A pass whose Prometheus and probes never answer (a loopback server that accepts and stays
silent) still ends in time for the leader to renew its Lease: every outside read of the pass
fits in a budget derived from LEADER_ELECTION_LEASE_SECONDS and _RENEW_SECONDS.

Real time, real sockets: a 3 s Lease renewed every 1 s, so the leader must renew within 2 s.
A tick of three passes (each write met a conflict) shares that one budget.
"""

from __future__ import annotations

import re

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.system.clock import SystemClock
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import (
    OPT_IN_LABEL,
    OPT_IN_VALUE,
    Shadow,
    ShadowSpec,
    ShadowStatus,
    shadow_name,
)
from brupop.domain.states import StateTimeouts, UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import controller_container
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME
from brupop.services.controller.service import ControllerService
from tests.support.loopback_reach import loopback_http
from tests.support.silent_server import SilentServer

LEASE, RENEW = 3.0, 1.0
TICKS = 6
NEW = "1.20.0"


def _cluster(silent: SilentServer) -> InMemoryCluster:
    """One node in its health gate, and a policy whose every outside read goes to `silent`."""
    cluster = InMemoryCluster(clock=SystemClock())
    node = cluster.add_node("n1", labels={OPT_IN_LABEL: OPT_IN_VALUE}, internal_ip="127.0.0.1")
    shadow = cluster.shadows.create("n1", node.uid)
    spec = ShadowSpec(
        state=UpdateState.MONITORING_UPDATE,
        state_transition_timestamp=SystemClock().now(),
        version=NEW,
    )
    cluster.shadows.replace_spec(shadow.name, spec, None)
    status = ShadowStatus(
        current_version=NEW, target_version=NEW, current_state=UpdateState.MONITORING_UPDATE
    )
    cluster.shadows.update_status(shadow_name("n1"), status)
    probes = [
        {"url": f"http://{{node_ip}}:{silent.port}/healthz/{i}", "timeoutSeconds": 60}
        for i in range(3)
    ]
    spec_text = {
        "alertGate": {"prometheusUrl": silent.url},
        "healthGate": {"timeoutSeconds": 600, "requireNodeReady": False, "httpProbes": probes},
    }
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": spec_text})
    return cluster


def _racing_agent(cluster: InMemoryCluster, node: str) -> list[str]:
    """A second node that staged its update (its next step is a reboot, which no alert holds),
    whose agent reports just before every spec write to it (so each write conflicts and asks
    for another pass); the writes tried."""
    added = cluster.add_node(node, labels={OPT_IN_LABEL: OPT_IN_VALUE})
    racing = cluster.shadows.create(node, added.uid).name
    staged = UpdateState.STAGED_AND_PERFORMED_UPDATE
    spec = ShadowSpec(state=staged, state_transition_timestamp=SystemClock().now(), version=NEW)
    cluster.shadows.replace_spec(racing, spec, None)
    status = ShadowStatus(current_version="1.19.0", target_version=NEW, current_state=staged)
    cluster.shadows.update_status(racing, status)
    shadows, tried = cluster.shadows, []
    original = shadows.replace_spec

    def raced(name: str, spec: ShadowSpec, resource_version: str | None) -> Shadow:
        if name == racing:
            tried.append(name)
            shadows.update_status(racing, status)
        return original(name, spec, resource_version)

    shadows.replace_spec = raced  # type: ignore[method-assign]
    return tried


def _controller(cluster: InMemoryCluster, limit: int = 1) -> ControllerService:
    clock = SystemClock()
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(limit), StateTimeouts(), None),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=cluster.namespace,
        identity="controller-black-holed",
        lease_seconds=LEASE,
        renew_seconds=RENEW,
    )
    container = controller_container(cluster, config, clock)
    container.http.override(loopback_http())  # probes and Prometheus may reach the silent server
    return container.service()


def test_a_black_holed_prometheus_and_probes_do_not_cost_the_leader_its_lease() -> None:
    with SilentServer() as silent:
        cluster = _cluster(silent)
        controller = _controller(cluster)
        renewals: set[object] = set()
        for tick in range(TICKS):
            controller.tick()
            assert controller.elector.is_leader(), f"leadership lost after {tick + 1} ticks"
            renewals.add(cluster.leases.get(cluster.namespace, DEFAULT_LEASE_NAME).renewed_at)
        accepted = silent.accepted
    reason = {row.node: row.detail for row in controller.reports()}["n1"]

    # Each tick read the black hole within its budget: Prometheus and one probe at most, each
    # given at most half the budget, never a probe's own 60 s.
    assert 2 <= accepted <= 2 * TICKS, f"{accepted} reads reached the black hole"
    assert given_seconds(reason) <= 0.5, reason
    assert len(renewals) >= TICKS // 2, renewals  # renewed as it went, not only held


def given_seconds(reason: str) -> float:
    """The timeout a read was given, from its reason ("... no answer within 0.5 s ...")."""
    given = re.search(r"no answer within ([0-9.]+) s", reason)
    assert given is not None, reason
    return float(given[1])


def test_a_tick_of_three_passes_reads_the_black_holes_within_one_budget() -> None:
    with SilentServer() as silent:
        cluster = _cluster(silent)
        tried = _racing_agent(cluster, "n2")
        controller = _controller(cluster, limit=2)
        assert controller.config.gate_check_budget_seconds == 1.0
        controller.tick()
        accepted = silent.accepted
    reason = {row.node: row.detail for row in controller.reports()}["n1"]

    assert len(tried) == 3, "three passes, each still leading: each write to n2 met a conflict"
    # The first pass read Prometheus (given half the budget) and the first probe (given what
    # was left, never its own 60 s); the budget spent, the later passes read nothing more.
    assert "no answer within" not in reason or given_seconds(reason) <= 0.5, reason
    assert 1 <= accepted <= 2, f"{accepted} reads reached the black hole"
    assert controller.elector.is_leader()
