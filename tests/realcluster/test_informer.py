"""The runtime Informer against kube-apiserver: a version compacted away (410) is one relist,
after which it follows from a watch it holds open, resumed across the stream's end without
listing again, waking its owner on each change."""

from __future__ import annotations

import functools
import operator
import uuid
from collections.abc import Iterator

import pytest
from kubernetes import client

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.cluster.objects import WatchBookmark, WatchEvent
from brupop.domain.shadow import Shadow
from brupop.services.runtime.informer import Following, Informer
from brupop.services.runtime.mirror import Mirror
from tests.realcluster.conftest import ControlPlane
from tests.support.control_plane.chart_install import NAMESPACE, apply_chart
from tests.support.polling import wait_until


@pytest.fixture
def admin_cluster(control_plane: ControlPlane) -> Iterator[KubernetesCluster]:
    apply_chart(control_plane.api)
    yield KubernetesCluster(control_plane.api, NAMESPACE)


def _holds(store: Mirror[Shadow], shadow: Shadow) -> bool:
    return store.get(shadow.name) == shadow


def _opened_more_than(opened: list[str | None], count: int) -> bool:
    return len(opened) > count


class Wakes:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


def _node(plane: ControlPlane) -> tuple[str, str]:
    """A Node to own a shadow (a shadow whose owner does not exist is collected at once)."""
    name = f"informer-{uuid.uuid4().hex[:6]}"
    created = plane.core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=name)))
    return name, created.metadata.uid


def test_an_informer_relists_once_after_a_410_then_follows_across_watch_ends(
    control_plane: ControlPlane, admin_cluster: KubernetesCluster
) -> None:
    shadows = admin_cluster.shadows
    store: Mirror[Shadow] = Mirror(
        operator.attrgetter("name"), operator.attrgetter("resource_version")
    )
    opened: list[str | None] = []  # the version each watch was opened from

    def watch(version: str | None, seconds: float) -> Iterator[WatchEvent[Shadow] | WatchBookmark]:
        opened.append(version)
        return shadows.watch(version, seconds)

    informer = Informer("shadows", shadows.list, watch, store)
    informer.apply(WatchBookmark("1"))  # a version kube-apiserver compacted away long ago
    wakes = Wakes()
    # Watches of 2 to 4 s: the test sees several end and resume within its time.
    informer.start(wakes, following=Following(watch_seconds=2.0, retry_seconds=0.2))
    nodes: list[str] = []
    try:
        wait_until(lambda: informer.relists == 1, "the relist after the 410")
        for turn in range(3):
            node, uid = _node(control_plane)
            nodes.append(node)
            shadow = shadows.create(node, uid)
            wait_until(functools.partial(_holds, store, shadow), "the created shadow")
            more = functools.partial(_opened_more_than, opened, len(opened))
            wait_until(more, f"a watch ended and was resumed ({turn})")
    finally:
        informer.stop(0.0)
        for node in nodes:  # its shadow goes with it
            control_plane.core.delete_node(node)
    assert informer.relists == 1
    assert not informer.failing
    assert wakes.count >= 4  # the relist and the three creations
    assert opened[0] == "1" and None not in opened  # resumed from versions, never listed again
