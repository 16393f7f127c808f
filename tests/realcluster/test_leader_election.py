"""Leader election on a real coordination.k8s.io Lease: two controller replicas, each with its
own TokenRequest token of the chart's controller ServiceAccount, elect one leader; when the
leader is cut off from the API (as a killed or partitioned process: it neither renews nor
releases), the other takes over once the Lease has expired, and never are both leading."""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import pytest

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.services.controller.service import ControllerService
from tests.realcluster.conftest import ControlPlane
from tests.realcluster.controllers import Timing, controller_over, running
from tests.support.control_plane.chart_install import (
    CONTROLLER_ACCOUNT,
    NAMESPACE,
    apply_chart,
    cluster_as,
)
from tests.support.polling import wait_until

TIMING = Timing(tick_seconds=0.5, lease_seconds=6.0, renew_seconds=1.0)
LOOK = min(TIMING.lease_seconds + TIMING.renew_seconds, 4 * TIMING.renew_seconds)
"""How often a replica that does not lead reads the Lease (the elector's default)."""
UNREACHABLE = "https://127.0.0.1:1"  # nothing listens on port 1: every call is refused


@pytest.fixture(scope="module")
def admin(control_plane: ControlPlane) -> KubernetesCluster:
    apply_chart(control_plane.api)
    return KubernetesCluster(control_plane.api, NAMESPACE)


@dataclass
class LeaderWatch:
    """Samples both replicas' `is_leader()` every 20 ms: who leads, and any moment both do."""

    replicas: dict[str, ControllerService]
    both: int = 0
    leading: dict[str, float] = field(default_factory=dict)  # first moment each led
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            now = time.monotonic()
            leaders = [name for name, s in self.replicas.items() if s.elector.is_leader()]
            self.both += len(leaders) > 1
            for name in leaders:
                self.leading.setdefault(name, now)
            self.stop.wait(0.02)  # the sampling interval

    def leaders(self) -> list[str]:
        return [name for name, s in self.replicas.items() if s.elector.is_leader()]


@pytest.fixture
def replicas(control_plane: ControlPlane) -> Iterator[tuple[dict[str, KubernetesCluster], str]]:
    ca = control_plane.folder / "pki" / "ca.crt"
    clusters = {
        name: cluster_as(control_plane.api, ca, CONTROLLER_ACCOUNT, component=name)
        for name in ("replica-a", "replica-b")
    }
    yield clusters, f"leader-{uuid.uuid4().hex[:8]}"
    for cluster in clusters.values():
        cluster.close()


@pytest.fixture
def watch_of() -> Iterator[list[LeaderWatch]]:
    started: list[LeaderWatch] = []
    yield started
    for watch in started:
        watch.stop.set()


def renewed(admin: KubernetesCluster, lease: str, holder: str, times: int) -> None:
    """Wait until `holder` renewed the Lease `lease` `times` more times (its renewTime moved on
    so often), failing if another replica holds it meanwhile."""
    seen = {admin.leases.get(NAMESPACE, lease).renewed_at}

    def moved_on() -> bool:
        current = admin.leases.get(NAMESPACE, lease)
        assert current.holder == holder, f"{current.holder} holds the Lease, not {holder}"
        seen.add(current.renewed_at)
        return len(seen) > times

    wait_until(moved_on, f"{holder} to renew the Lease {times} more times", interval=0.1)


def start_watch(watches: list[LeaderWatch], replicas: dict[str, ControllerService]) -> LeaderWatch:
    watch = LeaderWatch(replicas)
    threading.Thread(target=watch.run, daemon=True).start()
    watches.append(watch)
    return watch


def test_two_replicas_elect_one_leader_and_the_other_takes_over_a_cut_off_one_after_expiry(
    admin: KubernetesCluster,
    replicas: tuple[dict[str, KubernetesCluster], str],
    watch_of: list[LeaderWatch],
) -> None:
    clusters, lease = replicas
    services = {name: controller_over(c, name, lease, TIMING) for name, c in clusters.items()}
    with running(services["replica-a"]), running(services["replica-b"]):
        watch = start_watch(watch_of, services)
        wait_until(lambda: len(watch.leaders()) == 1, "one leader", seconds=20)
        (leader,) = watch.leaders()
        (other,) = set(services) - {leader}
        first = admin.leases.get(NAMESPACE, lease)
        assert first.holder == leader
        renewed(admin, lease, leader, times=2)  # renewals go on; the other stays a candidate
        assert watch.leaders() == [leader]

        clusters[leader].api_client.configuration.host = UNREACHABLE
        renewals: list[datetime] = []  # the cut-off one's, as the Lease shows them

        def taken_over() -> bool:
            current = admin.leases.get(NAMESPACE, lease)
            if current.holder == leader and current.renewed_at is not None:
                renewals.append(current.renewed_at)
            return other in watch.leading

        # Within the candidate's first look at the last renewal plus looks spanning one
        # duration (it looks every LOOK seconds), and some slack for a loaded machine.
        within = LOOK + math.ceil(TIMING.lease_seconds / LOOK) * LOOK + 10
        wait_until(taken_over, f"{other} leads", seconds=within, interval=0.1)

        taken = admin.leases.get(NAMESPACE, lease)
        assert taken.holder == other
        assert taken.transitions == first.transitions + 1
        assert watch.leaders() == [other]  # the cut-off one stopped acting on its own
    assert watch.both == 0
    # Not before the Lease expired: taken a whole duration after the cut-off one's last
    # renewal, both as the replicas wrote them in the Lease.
    assert taken.acquired_at is not None and renewals
    waited = (taken.acquired_at - max(renewals)).total_seconds()
    assert waited >= TIMING.lease_seconds, f"taken {waited:.2f} s after the last renewal"


def test_a_leader_that_stops_releases_the_lease_and_the_other_takes_over_at_once(
    admin: KubernetesCluster,
    replicas: tuple[dict[str, KubernetesCluster], str],
    watch_of: list[LeaderWatch],
) -> None:
    clusters, lease = replicas
    # A Lease of a minute: within the 20 s awaited it cannot expire, so only the release can
    # have freed it for the candidate (at its next try, LOOK seconds at most).
    timing = Timing(tick_seconds=0.5, lease_seconds=60.0, renew_seconds=1.0)
    services = {name: controller_over(c, name, lease, timing) for name, c in clusters.items()}
    with running(services["replica-a"]) as first:
        wait_until(first.service.elector.is_leader, "replica-a leads", seconds=20)
        with running(services["replica-b"]):
            watch = start_watch(watch_of, services)
            renewed(admin, lease, "replica-a", times=2)
            assert watch.leaders() == ["replica-a"]
            first.stop.set()
            first.thread.join(timeout=10)
            assert admin.leases.get(NAMESPACE, lease).holder in (None, "replica-b")
            wait_until(lambda: "replica-b" in watch.leading, "replica-b leads", seconds=20)
            assert admin.leases.get(NAMESPACE, lease).holder == "replica-b"
    assert watch.both == 0
