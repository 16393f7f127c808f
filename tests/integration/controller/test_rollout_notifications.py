"""The real controller, wired as `brupop controller` wires it, sends a rollout's notifications to a
webhook on loopback: every kind the pass can produce, in the documented schema; nothing from a
replica that does not lead; passes unaffected by a receiver that hangs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.notifications.webhook import DeliveryBounds, WebhookTarget
from brupop.domain.cluster.resources import Resources
from brupop.domain.policy.update_policy import UpdatePolicySpec
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import ControllerContainer
from brupop.entrypoints.controller.notification_settings import NotificationSettings
from brupop.entrypoints.controller.notifying_ports import NotificationWiring
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.service import ControllerService
from tests.fakes.clock import FakeClock
from tests.support.webhook_receiver import Receiver, running_receiver, validate_v1

OLD, NEW = "1.19.0", "1.20.0"
QUICK = DeliveryBounds(queue_size=64, timeout_seconds=5, attempts=2, first_retry_seconds=0.01)


@dataclass
class Replica:
    service: ControllerService
    wiring: NotificationWiring
    registry: CollectorRegistry

    def sent(self) -> float:
        labels = {"webhook": "webhook-1"}
        return self.registry.get_sample_value("brupop_notifications_sent_total", labels) or 0.0

    def dropped(self, reason: str) -> float:
        labels = {"webhook": "webhook-1", "reason": reason}
        return self.registry.get_sample_value("brupop_notifications_dropped_total", labels) or 0.0


def _cluster(clock: FakeClock, nodes: int) -> InMemoryCluster:
    cluster = InMemoryCluster(clock=clock)
    for i in range(nodes):
        name = f"node-{i:02d}"
        node = cluster.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE})
        cluster.shadows.create(name, node.uid)
        status = ShadowStatus(
            current_version=OLD, target_version=NEW, current_state=UpdateState.IDLE
        )
        cluster.shadows.update_status(shadow_name(name), status)
    cluster.policies.create(UpdatePolicySpec())
    return cluster


@contextmanager
def _replica(
    cluster: InMemoryCluster,
    clock: FakeClock,
    url: str,
    identity: str = "c1",
    delivery: DeliveryBounds = QUICK,
) -> Iterator[Replica]:
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(1)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=cluster.namespace,
        identity=identity,
    )
    settings = NotificationSettings("test-cluster", (WebhookTarget("webhook-1", url),), delivery)
    container = ControllerContainer(config=config, notification_settings=settings)
    container.cluster.override(cluster)
    container.clock.override(clock)
    service = container.service()
    wiring = container.notifications()
    assert wiring is not None
    try:
        yield Replica(service, wiring, container.prometheus().registry)
    finally:
        wiring.close()


def _agents_follow(cluster: InMemoryCluster, *, stuck: frozenset[str] = frozenset()) -> None:
    """Each agent reports the state its spec asks for (the reboot brings the new version)."""
    for shadow in cluster.shadows.list().items:
        status = shadow.status
        wanted = shadow.spec.state
        if status is None or status.current_state is wanted or shadow.node_name in stuck:
            continue
        version = shadow.spec.version if wanted is UpdateState.REBOOTED_INTO_UPDATE else None
        update = {"current_state": wanted, "current_version": version or status.current_version}
        cluster.shadows.update_status(shadow.name, status.model_copy(update=update))


def _roll(cluster: InMemoryCluster, replica: Replica, clock: FakeClock, passes: int = 40) -> None:
    for _ in range(passes):
        replica.service.tick()
        _agents_follow(cluster)
        clock.advance(1)


def test_a_rollout_sends_started_updated_and_finished_in_the_documented_schema() -> None:
    clock = FakeClock()
    cluster = _cluster(clock, 2)
    with running_receiver() as receiver, _replica(cluster, clock, receiver.url) as replica:
        _roll(cluster, replica, clock)
        assert replica.wiring.notifier.wait_delivered(30)
    kinds = receiver.kinds()
    assert kinds == ["rollout_started", "node_updated", "node_updated", "rollout_finished"], kinds
    for body in receiver.bodies:
        validate_v1(body)
        assert body["cluster"] == "test-cluster"
    finished = receiver.bodies[-1]
    assert finished["counts"] == {"nodes": 2, "updated": 2, "failures": 0}
    assert finished["durationSeconds"] > 0
    assert replica.sent() == 4


def test_a_node_that_times_out_sends_node_failed_with_its_reason() -> None:
    clock = FakeClock()
    cluster = _cluster(clock, 1)
    with running_receiver() as receiver, _replica(cluster, clock, receiver.url) as replica:
        replica.service.tick()  # starts node-00, which never stages
        clock.advance(721)  # past the staged state's 720 s limit
        replica.service.tick()
        assert replica.wiring.notifier.wait_delivered(30)
    failed = [b for b in receiver.bodies if b["kind"] == "node_failed"]
    assert len(failed) == 1, receiver.kinds()
    validate_v1(failed[0])
    assert (failed[0]["node"], failed[0]["reason"]) == ("node-00", "timeout")


def test_a_drain_held_by_a_budget_sends_drain_blocked_naming_the_pod_and_the_budget() -> None:
    clock = FakeClock()
    cluster = _cluster(clock, 1)
    # room for db-0 elsewhere (the policy's capacity check lets node-00 start)
    cluster.add_node("spare", allocatable=Resources(2000, 4 << 30))
    cluster.add_pod("shop", "db-0", "node-00", labels={"app": "db"})
    cluster.add_disruption_budget("shop", "db-pdb", {"app": "db"}, max_unavailable=0)
    with running_receiver() as receiver, _replica(cluster, clock, receiver.url) as replica:
        for _ in range(6):
            replica.service.tick()
            spec = cluster.shadows.get("brs-node-00").spec.state
            if spec is UpdateState.REBOOTED_INTO_UPDATE:
                cluster.nodes.set_unschedulable("node-00", True)  # cordoned; the drain waits
                break
            _agents_follow(cluster)
        replica.service.tick()
        replica.service.tick()
        assert replica.wiring.notifier.wait_delivered(30)
    blocked = [b for b in receiver.bodies if b["kind"] == "drain_blocked"]
    assert len(blocked) == 1, receiver.kinds()
    validate_v1(blocked[0])
    assert blocked[0]["pods"] == ["shop/db-0"]
    assert blocked[0]["podDisruptionBudgets"] == ["shop/db-pdb"]


def test_pausing_and_resuming_the_policy_sends_fleet_paused_then_fleet_resumed() -> None:
    clock = FakeClock()
    cluster = _cluster(clock, 1)
    with running_receiver() as receiver, _replica(cluster, clock, receiver.url) as replica:
        replica.service.tick()
        cluster.policies.set_paused(True, cluster.policies.get().resource_version or "")
        replica.service.tick()
        cluster.policies.set_paused(False, cluster.policies.get().resource_version or "")
        replica.service.tick()
        assert replica.wiring.notifier.wait_delivered(30)
    fleet = [k for k in receiver.kinds() if k.startswith("fleet_")]
    assert fleet == ["fleet_paused", "fleet_resumed"]


def test_a_halt_reported_through_the_safety_metrics_sends_fleet_halted() -> None:
    clock = FakeClock()
    cluster = _cluster(clock, 1)
    with running_receiver() as receiver, _replica(cluster, clock, receiver.url) as replica:
        replica.service.tick()
        replica.wiring.metrics.set_fleet(paused=False, halted=True)
        assert replica.wiring.notifier.wait_delivered(30)
    assert "fleet_halted" in receiver.kinds()


def test_a_replica_that_does_not_lead_sends_nothing() -> None:
    clock = FakeClock()
    cluster = _cluster(clock, 2)
    with (
        running_receiver() as leader_receiver,
        running_receiver() as follower_receiver,
        _replica(cluster, clock, leader_receiver.url, "c1") as leader,
        _replica(cluster, clock, follower_receiver.url, "c2") as follower,
    ):
        for _ in range(40):
            leader.service.tick()
            follower.service.tick()
            _agents_follow(cluster)
            clock.advance(1)
        assert leader.wiring.notifier.wait_delivered(30)
        assert follower.wiring.notifier.wait_delivered(30)
        assert follower.service.elector.is_leader() is False
    assert "rollout_finished" in leader_receiver.kinds()
    assert follower_receiver.requests == 0
    assert follower.sent() == 0


def test_passes_go_on_while_the_receiver_hangs_and_what_does_not_fit_is_dropped_and_counted() -> (
    None
):
    clock = FakeClock()
    cluster = _cluster(clock, 3)
    hanging = Receiver(hold=threading.Event())
    one = DeliveryBounds(queue_size=1, timeout_seconds=5, attempts=2, first_retry_seconds=0.01)
    with (
        running_receiver(hanging) as receiver,
        _replica(cluster, clock, receiver.url, delivery=one) as replica,  # one in delivery,
    ):  # one queued, the rest dropped
        _roll(cluster, replica, clock, passes=60)
        states = {s.status.current_version for s in cluster.shadows.list().items if s.status}
        assert states == {NEW}, "the rollout finished while every delivery hung"
        assert replica.dropped("queue_full") >= 1
        assert replica.sent() == 0
