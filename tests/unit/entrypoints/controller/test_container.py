"""The controller's container builds the whole replica, and a provider overridden with a fake
is the one the replica uses: the cluster, the clock, the Events, the prober."""

from __future__ import annotations

from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.adapters.memory.gates import InMemoryHttpProber
from brupop.domain.cluster.objects import ClusterEvent
from brupop.domain.policy.update_policy import HealthGateSpec, HttpProbeSpec
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.safety.health_gate import CheckOutcome
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import ControllerContainer
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.services.controller.config import ControllerConfig
from tests.fakes.clock import FakeClock

PROBE_URL = "http://10.0.0.1:8080/healthz"
SETTINGS = {
    "cluster": "kubernetes",  # never reached: every test overrides the cluster or the ports
    "namespace": "brupop-bottlerocket-aws",
    "bind_address": "127.0.0.1",
    "metrics_port": 0,
}


class RecordedEvents:
    """An EventRecorder that keeps what it is given."""

    def __init__(self) -> None:
        self.recorded: list[ClusterEvent] = []

    def record(self, event: ClusterEvent) -> None:
        self.recorded.append(event)


def _cluster_waiting_for_an_update(clock: FakeClock) -> InMemoryCluster:
    cluster = InMemoryCluster(clock=clock)
    node = cluster.add_node("node-a", labels={OPT_IN_LABEL: OPT_IN_VALUE})
    cluster.shadows.create(node.name, node.uid)
    status = ShadowStatus(
        current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
    )
    cluster.shadows.update_status(shadow_name("node-a"), status)
    return cluster


def _container(cluster: InMemoryCluster) -> ControllerContainer:
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(1)),
        window=MaintenanceWindow.starting("* * * * * * *", now=cluster.clock.now()),
        namespace=cluster.namespace,
        identity="controller-1",
    )
    container = ControllerContainer(config=config)
    container.settings.from_dict(SETTINGS)
    return container


def _spec_state(cluster: InMemoryCluster) -> UpdateState:
    return cluster.shadows.get(shadow_name("node-a")).spec.state


def test_the_controller_container_runs_its_pass_over_the_cluster_put_in_its_place() -> None:
    clock = FakeClock()
    cluster = _cluster_waiting_for_an_update(clock)
    container = _container(cluster)
    container.cluster.override(cluster)
    container.clock.override(clock)

    container.service().tick()

    assert _spec_state(cluster) is not UpdateState.IDLE
    assert cluster.leases.get(cluster.namespace, "brupop-controller-leader") is not None


def test_the_controller_container_records_events_through_the_recorder_put_in_its_place() -> None:
    clock = FakeClock()
    cluster = _cluster_waiting_for_an_update(clock)
    events = RecordedEvents()
    container = _container(cluster)
    container.cluster.override(cluster)
    container.clock.override(clock)
    container.events.override(events)

    container.service().tick()

    assert _spec_state(cluster) is not UpdateState.IDLE
    assert events.recorded, "the pass that started node-a recorded no Event"
    assert container.surface().controller is container.service()


def test_the_controller_container_takes_the_memory_cluster_when_brupop_cluster_says_so() -> None:
    container = _container(InMemoryCluster())
    container.settings.from_dict({**SETTINGS, "cluster": "memory"})

    cluster = container.cluster()

    assert isinstance(cluster, InMemoryCluster)
    assert cluster.namespace == SETTINGS["namespace"]


def test_the_controller_container_probes_through_the_prober_put_in_its_place() -> None:
    clock = FakeClock()
    cluster = _cluster_waiting_for_an_update(clock)
    prober = InMemoryHttpProber()
    prober.answer(PROBE_URL, status=200)
    container = _container(cluster)
    container.cluster.override(cluster)
    container.prober.override(prober)
    gate = HealthGateSpec(require_node_ready=False, http_probes=(HttpProbeSpec(url=PROBE_URL),))

    result = container.health_checks().run("node-a", gate, None)[-1]

    assert prober.probed == [PROBE_URL]
    assert result.outcome is CheckOutcome.PASSED


_events: type[EventRecorder] = RecordedEvents
