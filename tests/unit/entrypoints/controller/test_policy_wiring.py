"""The `brupop controller` process follows the update policies of its cluster and publishes
`brupop_fleet_paused`."""

from __future__ import annotations

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics
from brupop.services.controller.config import ControllerConfig
from tests.fakes.clock import FakeClock


def _paused_gauge(metrics: PrometheusRolloutMetrics) -> str:
    lines = metrics.exposition().decode().splitlines()
    return next(line for line in lines if line.startswith("brupop_fleet_paused "))


def test_the_controller_process_pauses_on_the_policy_and_says_so_in_its_metrics() -> None:
    clock = FakeClock()
    cluster = InMemoryCluster(clock=clock)
    node = cluster.add_node("node-a", labels={OPT_IN_LABEL: OPT_IN_VALUE})
    cluster.shadows.create(node.name, node.uid)
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(1)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=cluster.namespace,
        identity="controller-1",
    )
    metrics = PrometheusRolloutMetrics()
    container = ControllerContainer(config=config)
    container.cluster.override(cluster)
    container.clock.override(clock)
    container.prometheus.override(metrics)
    service = container.service()

    service.tick()
    assert _paused_gauge(metrics) == "brupop_fleet_paused 0.0"
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"paused": True}})
    service.tick()

    assert _paused_gauge(metrics) == "brupop_fleet_paused 1.0"
