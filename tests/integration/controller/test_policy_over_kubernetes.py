"""The controller follows the update policy over HTTP to the Kubernetes API emulator: the
watch of the policy wakes it (a resume takes effect without waiting for a tick), the status goes
through the status subresource, and an ignored policy gets a warning Event about itself."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

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
from brupop.services.pausing import FleetPause
from tests.contract.kubernetes.conftest import sent
from tests.fakes.clock import FakeClock
from tests.support.kube_api_rules import EVENTS, POLICIES
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer
from tests.support.polling import wait_until

NS = "brupop-bottlerocket-aws"
NODES = [f"node-{i}" for i in range(3)]
# Far longer than any wait below: only the policy's watch can make the loop act in time.
TICK_SECONDS = 60.0
WAIT_SECONDS = 15.0


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with EmulatorServer() as server:
        yield server


@pytest.fixture
def kube(server: EmulatorServer) -> Iterator[KubernetesCluster]:
    cluster = KubernetesCluster(server.api_client(), NS)
    for name in NODES:
        node = node_from_object(server.emulator.add_node(name, labels={OPT_IN_LABEL: OPT_IN_VALUE}))
        shadow = cluster.shadows.create(name, node.uid)
        cluster.shadows.update_status(
            shadow.name,
            ShadowStatus(
                current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
            ),
        )
    try:
        yield cluster
    finally:
        cluster.close()


def _apply(emulator: KubeEmulator, name: str, spec: dict[str, Any]) -> None:
    stored = emulator.stored(POLICIES, NS, name)
    body: dict[str, Any] = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }
    if stored is not None and "status" in stored:
        body["status"] = stored["status"]  # as kubectl apply: the status stays
    emulator.put_object(POLICIES, body)


def _controller(kube: KubernetesCluster, clock: Clock, *, by_hand: bool) -> ControllerService:
    config = ControllerConfig(
        rollout_rules=RolloutRules(ConcurrencyLimit(3)),
        window=MaintenanceWindow.starting("* * * * * * *", now=clock.now()),
        namespace=NS,
        identity="controller-over-http",
        tick_seconds=TICK_SECONDS,
        watch_seconds=1.0,
        catch_up_by_list=by_hand,
    )
    return build_controller(kube, config, clock)


def _outside_idle(kube: KubernetesCluster) -> int:
    return sum(1 for s in kube.shadows.list().items if s.spec.state is not UpdateState.IDLE)


def _status(emulator: KubeEmulator) -> dict[str, Any]:
    stored = emulator.stored(POLICIES, NS, "default")
    assert stored is not None
    return dict(stored.get("status") or {})


def test_a_resume_seen_on_the_watch_starts_nodes_without_waiting_for_a_tick(
    server: EmulatorServer, kube: KubernetesCluster
) -> None:
    emulator = server.emulator
    _apply(emulator, "default", {"paused": True})
    controller = _controller(kube, SystemClock(), by_hand=False)
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,), daemon=True)
    thread.start()
    try:
        wait_until(
            lambda: _status(emulator).get("phase") == "Paused",
            "the Paused status",
            seconds=WAIT_SECONDS,
            interval=0.05,
        )
        assert _outside_idle(kube) == 0

        _apply(emulator, "default", {"paused": False})

        wait_until(
            lambda: _outside_idle(kube) == 3,
            "three nodes started after the resume",
            seconds=WAIT_SECONDS,
            interval=0.05,
        )
        wait_until(
            lambda: _status(emulator).get("phase") == "Rolling",
            "the Rolling status",
            seconds=WAIT_SECONDS,
            interval=0.05,
        )
        assert _status(emulator)["observedGeneration"] == 2
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def test_a_pause_seen_on_the_watch_stops_the_next_starts(
    server: EmulatorServer, kube: KubernetesCluster
) -> None:
    emulator = server.emulator
    _apply(emulator, "default", {"paused": False})
    controller = _controller(kube, FakeClock(), by_hand=True)
    kube.nodes.set_labels("node-0", {"brupop.bottlerocket.aws/paused": "true"})

    controller.tick()

    assert [
        s.node_name for s in kube.shadows.list().items if s.spec.state is not UpdateState.IDLE
    ] == [
        "node-1",
        "node-2",
    ]
    _apply(emulator, "default", {"paused": True})
    kube.nodes.set_labels("node-0", {"brupop.bottlerocket.aws/paused": None})
    controller.tick()
    assert _outside_idle(kube) == 2, "node-0 is let go by its label but the fleet is paused"
    status = _status(emulator)
    assert (status["phase"], status["observedGeneration"]) == ("Paused", 2)
    assert status["nodes"]["idle"] == 3


def test_the_status_goes_through_the_status_subresource(
    server: EmulatorServer, kube: KubernetesCluster
) -> None:
    emulator = server.emulator
    _apply(emulator, "default", {"paused": True})
    controller = _controller(kube, FakeClock(), by_hand=True)

    controller.tick()
    controller.tick()

    writes = [r for r in sent(emulator) if r.method == "PATCH" and "updatepolicies" in r.path]
    assert [r.path.rsplit("/", 1)[-1] for r in writes] == ["status"], "one write, to /status"


def test_an_ignored_policy_gets_one_warning_event_about_itself(
    server: EmulatorServer, kube: KubernetesCluster
) -> None:
    emulator = server.emulator
    _apply(emulator, "staging", {"paused": True})
    controller = _controller(kube, FakeClock(), by_hand=True)

    controller.tick()
    controller.tick()

    assert _outside_idle(kube) == 3
    events = [e for e in emulator.objects_of(EVENTS) if e["reason"] == "PolicyIgnored"]
    assert len(events) == 1
    assert events[0]["type"] == "Warning"
    assert events[0]["involvedObject"]["kind"] == "BottlerocketUpdatePolicy"
    assert events[0]["involvedObject"]["name"] == "staging"


def test_a_halt_is_written_with_the_version_read_and_a_resume_releases_it(
    server: EmulatorServer, kube: KubernetesCluster
) -> None:
    emulator = server.emulator
    _apply(emulator, "default", {"haltAfterFailures": 1})
    controller = _controller(kube, FakeClock(), by_hand=True)
    controller.tick()
    crashed = kube.shadows.get("brs-node-0")
    assert crashed.status is not None
    kube.shadows.update_status(
        crashed.name,
        crashed.status.model_copy(update={"current_state": UpdateState.ERROR_RESET}),
    )

    controller.tick()

    status = _status(emulator)
    assert status["phase"] == "Halted"
    assert status["haltReason"] == {
        "node": "node-0",
        "check": "errorReset",
        "detail": "the agent failed on its way to StagedAndPerformedUpdate",
    }
    writes = [r for r in sent(emulator) if r.method == "PATCH" and r.path.endswith("/status")]
    assert "resourceVersion" in writes[-1].body["metadata"], "written on the version read"

    FleetPause(kube.policies).resume()
    controller.tick()

    status = _status(emulator)
    assert status["phase"] != "Halted" and "haltReason" not in status
