"""The `brupop controller` process, wired by its container from notification settings, sends to
its webhook and counts on its own /metrics; without a webhook it wires nothing."""

from __future__ import annotations

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.notifications.webhook import WebhookTarget
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.metrics import PrometheusRolloutMetrics
from brupop.entrypoints.controller.notification_settings import NotificationSettings
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.service import ControllerService
from tests.fakes.clock import FakeClock
from tests.support.polling import wait_until
from tests.support.webhook_receiver import running_receiver


def _setup() -> tuple[InMemoryCluster, FakeClock, ControllerConfig]:
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
    return cluster, clock, config


def build_service(
    cluster: InMemoryCluster,
    clock: FakeClock,
    config: ControllerConfig,
    metrics: PrometheusRolloutMetrics,
    settings: NotificationSettings,
) -> ControllerService:
    """The process's container, over the in-memory cluster, its clock and these collectors."""
    container = ControllerContainer(config=config, notification_settings=settings)
    container.cluster.override(cluster)
    container.clock.override(clock)
    container.prometheus.override(metrics)
    return container.service()


def test_the_controller_process_sends_a_pause_to_its_webhook_and_counts_it() -> None:
    cluster, clock, config = _setup()
    metrics = PrometheusRolloutMetrics()
    with running_receiver() as receiver:
        settings = NotificationSettings("prod", (WebhookTarget("webhook-1", receiver.url),))
        service = build_service(cluster, clock, config, metrics, settings)
        service.tick()
        cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"paused": True}})
        service.tick()
        assert receiver.wait_for(lambda seen: "fleet_paused" in seen.kinds())
        wait_until(lambda: _sent(metrics) >= 1, "the sent notification counted", seconds=30)
    assert _sent(metrics) == 1
    assert receiver.bodies[0]["cluster"] == "prod"


def _sent(metrics: PrometheusRolloutMetrics) -> float:
    sample = metrics.registry.get_sample_value
    return sample("brupop_notifications_sent_total", {"webhook": "webhook-1"}) or 0.0


def test_without_a_webhook_the_controller_has_no_notification_counters() -> None:
    cluster, clock, config = _setup()
    metrics = PrometheusRolloutMetrics()
    build_service(cluster, clock, config, metrics, NotificationSettings()).tick()
    assert b"brupop_notifications" not in metrics.exposition()


def test_the_controller_process_sends_a_halt_decided_by_its_pass_to_its_webhook() -> None:
    cluster, clock, config = _setup()
    node = cluster.add_node("node-b", labels={OPT_IN_LABEL: OPT_IN_VALUE})
    cluster.shadows.create(node.name, node.uid)
    for name in ("node-a", "node-b"):
        status = ShadowStatus(
            current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
        )
        cluster.shadows.update_status(shadow_name(name), status)
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"haltAfterFailures": 1}})
    metrics = PrometheusRolloutMetrics()
    with running_receiver() as receiver:
        settings = NotificationSettings("prod", (WebhookTarget("webhook-1", receiver.url),))
        service = build_service(cluster, clock, config, metrics, settings)
        service.tick()
        started = cluster.shadows.get(shadow_name("node-a"))
        assert started.status is not None and started.spec.state is not UpdateState.IDLE
        failed = started.status.model_copy(update={"current_state": UpdateState.ERROR_RESET})
        cluster.shadows.update_status(started.name, failed)
        service.tick()
        assert receiver.wait_for(lambda seen: "fleet_halted" in seen.kinds())


def test_with_a_webhook_the_metrics_still_show_the_limit_applied_and_the_expected_time() -> None:
    cluster, clock, config = _setup()
    cluster.policies.apply({"metadata": {"name": "default"}, "spec": {"maxConcurrent": 3}})
    cluster.policies.update_status(UpdatePolicyStatus(update_durations=(600, 1200)))
    metrics = PrometheusRolloutMetrics()
    with running_receiver() as receiver:
        settings = NotificationSettings("prod", (WebhookTarget("webhook-1", receiver.url),))
        service = build_service(cluster, clock, config, metrics, settings)
        service.tick()
    assert metrics.registry.get_sample_value("brupop_max_concurrent_update") == 3.0
    assert metrics.registry.get_sample_value("brupop_expected_update_seconds") == 1200.0
