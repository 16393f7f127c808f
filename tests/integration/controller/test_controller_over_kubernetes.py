"""The controller with the Kubernetes adapters, over HTTP to the Kubernetes API emulator: the
same rollout, conflicts, Lease and opt-out cleanup as against the in-memory cluster."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.kubernetes.resources.nodes import node_from_object
from brupop.adapters.system.clock import SystemClock
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from brupop.entrypoints.controller.container import build_controller
from brupop.ports.clock import Clock
from brupop.services.controller.config import ControllerConfig
from brupop.services.controller.service import ControllerService
from tests.fakes.clock import FakeClock
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.polling import wait_until

NS = "brupop-bottlerocket-aws"
NODES = [f"node-{i}" for i in range(5)]


@pytest.fixture
def kube() -> Iterator[KubernetesCluster]:
    with EmulatorServer() as server:
        cluster = KubernetesCluster(server.api_client(), NS)
        for name in NODES:
            node = node_from_object(
                server.emulator.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE})
            )
            shadow = cluster.shadows.create(name, node.uid)
            cluster.shadows.update_status(
                shadow.name,
                ShadowStatus(
                    current_version="1.19.0",
                    target_version="1.20.0",
                    current_state=UpdateState.IDLE,
                ),
            )
        try:
            yield cluster
        finally:
            cluster.close()


def _controller(kube: KubernetesCluster, clock: Clock, *, tick: float = 2.0) -> ControllerService:
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(3)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=NS,
        identity="controller-over-http",
        tick_seconds=tick,
        watch_seconds=1.0,
        catch_up_by_list=True,  # ticked by hand: no watch thread feeds the mirror
    )
    return build_controller(kube, config, clock)


def _agents_step(kube: KubernetesCluster) -> None:
    for shadow in kube.shadows.list().items:
        status, spec = shadow.status, shadow.spec
        if status is None or status.current_state == spec.state:
            continue
        current = spec.version if spec.state is UpdateState.REBOOTED_INTO_UPDATE else None
        update: dict[str, object] = {"current_state": spec.state}
        if current:
            update["current_version"] = current
        kube.shadows.update_status(shadow.name, status.model_copy(update=update))


def _outside_idle(kube: KubernetesCluster) -> int:
    return sum(
        1
        for s in kube.shadows.list().items
        if s.spec.state is not UpdateState.IDLE
        or (s.status is not None and s.status.current_state is not UpdateState.IDLE)
    )


def test_a_whole_rollout_through_the_kubernetes_api_never_exceeds_the_limit(
    kube: KubernetesCluster,
) -> None:
    clock = FakeClock()
    controller = _controller(kube, clock)
    controller.tick()
    assert _outside_idle(kube) == 3
    for _ in range(40):
        _agents_step(kube)
        clock.advance(2)
        controller.tick()
        assert _outside_idle(kube) <= 3
    shadows = kube.shadows.list().items
    assert all(s.status is not None and s.status.current_version == "1.20.0" for s in shadows)
    assert all(s.spec.state is UpdateState.IDLE for s in shadows)
    assert kube.leases.get(NS, "brupop-controller-leader").holder == "controller-over-http"


def test_an_opted_out_node_loses_its_shadow_through_the_api(kube: KubernetesCluster) -> None:
    controller = _controller(kube, FakeClock())
    kube.nodes.set_labels("node-0", {OPT_IN_LABEL: None})
    controller.tick()
    names = {s.node_name for s in kube.shadows.list().items}
    assert names == set(NODES) - {"node-0"}


def test_the_loop_reacts_to_a_watched_change_though_no_tick_comes(kube: KubernetesCluster) -> None:
    controller = _controller(kube, SystemClock(), tick=3600.0)  # no tick within the test
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_until(lambda: _outside_idle(kube) == 3, "the first pass's starts", seconds=30)
        started = next(s for s in kube.shadows.list().items if s.spec.state is not UpdateState.IDLE)
        assert started.status is not None
        kube.shadows.update_status(
            started.name,
            started.status.model_copy(
                update={"current_state": UpdateState.STAGED_AND_PERFORMED_UPDATE}
            ),
        )
        wait_until(
            lambda: kube.shadows.get(started.name).spec.state is UpdateState.REBOOTED_INTO_UPDATE,
            "the next spec, written on the watched change",
            seconds=30,
        )
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
