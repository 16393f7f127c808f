"""A controller replica (build_controller over a KubernetesCluster with the chart's controller
token) through what a real control plane does to its watches: kube-apiserver killed and
started again mid-watch after an etcd compaction (the watches answer 410 Gone), and a
compaction alone (the watch cache keeps serving). It relists when it must, loses no change,
and never fails a pass."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import pytest
import structlog
from kubernetes import client

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.services.controller.service import ControllerService
from tests.realcluster.conftest import KWOK_ANNOTATION, SCRIPT, ControlPlane, node_ready
from tests.realcluster.controllers import controller_over, running
from tests.support.control_plane import etcd_admin
from tests.support.control_plane.chart_install import (
    CONTROLLER_ACCOUNT,
    NAMESPACE,
    apply_chart,
    cluster_as,
)
from tests.support.control_plane.components import Ports
from tests.support.polling import wait_until

RUNNING = "1.0.0"
OFFERED = "1.1.0"


@dataclass(frozen=True)
class Fleet:
    """One opted-in kwok Node whose shadow reports it Idle on RUNNING, nothing offered."""

    node: str
    shadow: str


@pytest.fixture(scope="module")
def admin(control_plane: ControlPlane) -> KubernetesCluster:
    apply_chart(control_plane.api)
    return KubernetesCluster(control_plane.api, NAMESPACE)


@pytest.fixture
def fleet(control_plane: ControlPlane, admin: KubernetesCluster) -> Iterator[Fleet]:
    node = f"recovery-{uuid.uuid4().hex[:6]}"
    meta = client.V1ObjectMeta(
        name=node, annotations=KWOK_ANNOTATION, labels={OPT_IN_LABEL: OPT_IN_VALUE}
    )
    created = control_plane.core.create_node(client.V1Node(metadata=meta))
    wait_until(lambda: node_ready(control_plane.core, node), f"{node} Ready", seconds=30)
    shadow = admin.shadows.create(node, created.metadata.uid)
    admin.shadows.update_status(shadow.name, idle_on(RUNNING, offered=RUNNING))
    yield Fleet(node, shadow.name)
    control_plane.core.delete_node(node)  # the garbage collector deletes its shadow


@pytest.fixture
def controller(control_plane: ControlPlane) -> Iterator[ControllerService]:
    ca = control_plane.folder / "pki" / "ca.crt"
    cluster = cluster_as(control_plane.api, ca, CONTROLLER_ACCOUNT)
    yield controller_over(cluster, "recovering", f"recovery-{uuid.uuid4().hex[:8]}")
    cluster.close()


def idle_on(version: str, *, offered: str) -> ShadowStatus:
    return ShadowStatus(
        current_version=version, target_version=offered, current_state=UpdateState.IDLE
    )


def mirrored(service: ControllerService, shadow: str, offered: str) -> bool:
    held = service.fleet.shadows.get(shadow)
    return held is not None and held.status is not None and held.status.target_version == offered


def started(admin: KubernetesCluster, shadow: str) -> bool:
    spec = admin.shadows.get(shadow).spec
    return spec.state is UpdateState.STAGED_AND_PERFORMED_UPDATE and spec.version == OFFERED


def settled_relists(service: ControllerService, passes: int = 4) -> int:
    """The shadow informer's lists once `passes` passes in a row (counted as the running loop
    makes them) made none."""
    informer = service.fleet.shadow_informer
    made = [0]
    tick = service.tick

    def counted(*args: Any, **kwargs: Any) -> None:
        tick(*args, **kwargs)
        made[0] += 1

    seen, since = informer.relists, 0

    def settled() -> bool:
        nonlocal seen, since
        if informer.relists != seen:
            seen, since = informer.relists, made[0]
        return made[0] - since >= passes

    service.tick = counted  # type: ignore[method-assign]
    try:
        wait_until(settled, f"{passes} passes in a row without a list", seconds=60)
    finally:
        del service.tick
    return seen


def failures(lines: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    """Lines a healthy replica never writes: an ERROR, a traceback, a failed pass."""
    return [
        line
        for line in lines
        if line["log_level"] in ("error", "critical")
        or "exc_info" in line
        or line["event"].startswith("controller.pass_failed")
    ]


def test_after_a_compaction_and_an_apiserver_crash_the_controller_relists_and_acts_on_a_change(
    control_plane: ControlPlane, admin: KubernetesCluster, fleet: Fleet, controller: Any
) -> None:
    ports = Ports.load(control_plane.folder / "ports.json")
    informers = (controller.fleet.shadow_informer, controller.fleet.node_informer)
    with structlog.testing.capture_logs() as lines, running(controller) as replica:
        wait_until(controller.elector.is_leader, "the replica leads", seconds=30)
        wait_until(lambda: mirrored(controller, fleet.shadow, RUNNING), "shadow mirrored")
        relists = [informer.relists for informer in informers]

        etcd_admin.compact(ports)
        began = time.monotonic()
        restart = [str(SCRIPT), "restart", str(control_plane.folder), "kube-apiserver", "--kill"]
        restarted = subprocess.run(restart, capture_output=True, text=True, timeout=120)
        assert restarted.returncode == 0, restarted.stderr
        outage = time.monotonic() - began
        # An agent's report, written the moment the API is back: the replica's watches are
        # still down or just resuming from a version the rebuilt watch cache no longer has.
        admin.shadows.update_status(fleet.shadow, idle_on(RUNNING, offered=OFFERED))

        wait_until(lambda: started(admin, fleet.shadow), "the update started", seconds=60)
        assert replica.thread.is_alive()
    # Each watch met a 410 (the rebuilt watch cache starts after its version) and listed again.
    assert [
        informer.relists > before for informer, before in zip(informers, relists, strict=True)
    ] == [
        True,
        True,
    ]
    assert failures(lines) == []
    assert outage < 60


def test_a_compaction_alone_is_served_by_the_watch_cache_and_no_change_is_lost(
    control_plane: ControlPlane, admin: KubernetesCluster, fleet: Fleet, controller: Any
) -> None:
    ports = Ports.load(control_plane.folder / "ports.json")
    with structlog.testing.capture_logs() as lines, running(controller):
        wait_until(controller.elector.is_leader, "the replica leads", seconds=30)
        wait_until(lambda: mirrored(controller, fleet.shadow, RUNNING), "shadow mirrored")
        relists = settled_relists(controller)  # the start's list, and the new leader's
        before = controller.fleet.shadow_informer.version

        compacted = etcd_admin.compact(ports)  # past the replica's version: Leases move it on
        admin.shadows.update_status(fleet.shadow, idle_on(RUNNING, offered=OFFERED))

        wait_until(lambda: started(admin, fleet.shadow), "the update started", seconds=30)
        assert before is not None and int(before) < compacted
    # kube-apiserver keeps the history in its watch cache: the resumed watch needed no list.
    assert controller.fleet.shadow_informer.relists == relists
    assert controller.fleet.shadow_informer.version != before
    assert failures(lines) == []
