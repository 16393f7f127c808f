"""The runtime Informer following a watch from its own thread, the same for the in-memory
cluster and for Kubernetes over HTTP: it fills its store, wakes its owner on each change,
relists once after a 410 (a compaction), and a restarted one rebuilds the same store."""

from __future__ import annotations

import operator
from collections.abc import Iterator

import pytest
from structlog.testing import capture_logs

from brupop.domain.shadow import Shadow, ShadowSpec
from brupop.domain.states import UpdateState
from brupop.services.runtime.informer import Following, Informer, VersionCheck
from brupop.services.runtime.mirror import Mirror
from tests.contract.cluster.conftest import Backend, Ports
from tests.support.polling import wait_until

QUICK = Following(watch_seconds=0.5, retry_seconds=0.1)
STAGED = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.20.0")


class Wakes:
    """How many times the informer woke its owner."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


def _informer(cluster: Ports) -> Informer[Shadow]:
    store: Mirror[Shadow] = Mirror(
        operator.attrgetter("name"), operator.attrgetter("resource_version")
    )
    return Informer("shadows", cluster.shadows.list, cluster.shadows.watch, store)


@pytest.fixture
def informers() -> Iterator[list[Informer[Shadow]]]:
    """Informers a test starts; each is stopped at the end."""
    started: list[Informer[Shadow]] = []
    yield started
    for informer in started:
        informer.stop(0.0)


def _shadow(backend: Backend, cluster: Ports, node: str) -> Shadow:
    return cluster.shadows.create(node, backend.add_node(node).uid)


def test_a_following_informer_fills_its_store_and_wakes_its_owner_on_each_change(
    backend: Backend, cluster: Ports, informers: list[Informer[Shadow]]
) -> None:
    first = _shadow(backend, cluster, "node-a")
    informer, wakes = _informer(cluster), Wakes()
    informers.append(informer)

    informer.start(wakes, following=QUICK)
    wait_until(lambda: informer.mirror.get(first.name) is not None, "the first list")
    second = _shadow(backend, cluster, "node-b")
    staged = cluster.shadows.replace_spec(first.name, STAGED, None)

    wait_until(lambda: informer.mirror.get(second.name) is not None, "the created shadow")
    wait_until(lambda: informer.mirror.get(first.name) == staged, "the changed spec")
    assert wakes.count >= 3  # the list, the creation, the change
    assert informer.relists == 1


def test_a_version_compacted_away_is_followed_by_one_relist_that_misses_nothing(
    backend: Backend, cluster: Ports, informers: list[Informer[Shadow]]
) -> None:
    kept, deleted = _shadow(backend, cluster, "node-a"), _shadow(backend, cluster, "node-b")
    informer = _informer(cluster)
    informer.relist()
    staged = cluster.shadows.replace_spec(kept.name, STAGED, None)
    cluster.shadows.delete(deleted.name)
    backend.forget_history()  # a compaction: the version listed is gone (410)
    informers.append(informer)

    informer.start(following=QUICK)

    wait_until(lambda: informer.relists == 2, "the relist after the 410")
    wait_until(lambda: informer.mirror.get(kept.name) == staged, "the change made meanwhile")
    assert informer.mirror.get(deleted.name) is None
    assert not informer.failing


def test_a_restarted_informer_rebuilds_the_same_store(
    backend: Backend, cluster: Ports, informers: list[Informer[Shadow]]
) -> None:
    for node in ("node-a", "node-b"):
        _shadow(backend, cluster, node)
    before = _informer(cluster)
    informers.append(before)
    before.start(following=QUICK)
    wait_until(lambda: len(before.mirror) == 2, "the first informer's list")
    before.stop(0.0)

    after = _informer(cluster)
    informers.append(after)
    after.start(following=QUICK)

    wait_until(lambda: len(after.mirror) == 2, "the restarted informer's list")
    assert sorted(after.mirror.values(), key=lambda s: s.name) == sorted(
        before.mirror.values(), key=lambda s: s.name
    )


def test_a_following_informer_resyncs_from_its_own_thread_and_repairs_its_store(
    backend: Backend, cluster: Ports, informers: list[Informer[Shadow]]
) -> None:
    held = _shadow(backend, cluster, "node-a")
    informer = _informer(cluster)
    informers.append(informer)
    informer.start(following=Following(watch_seconds=60.0, retry_seconds=0.1, resync_seconds=0.3))
    wait_until(lambda: informer.mirror.get(held.name) is not None, "the first list")
    informer.mirror.remove(held.name)  # as if an event had been missed: no watch brings it back

    wait_until(lambda: informer.mirror.get(held.name) == held, "the resync's repair")
    assert informer.relists >= 2


def test_each_list_logs_its_kind_its_way_and_its_cpu(backend: Backend, cluster: Ports) -> None:
    held = _shadow(backend, cluster, "node-a")
    store: Mirror[Shadow] = Mirror(
        operator.attrgetter("name"), operator.attrgetter("resource_version")
    )
    check = VersionCheck(cluster.shadows.list_versions, cluster.shadows.get)
    informer = Informer("shadows", cluster.shadows.list, cluster.shadows.watch, store, check)
    informer.relist()
    cluster.shadows.replace_spec(held.name, STAGED, None)

    with capture_logs() as logs:
        informer.relist()  # a resync of a filled store: by versions, one object read again

    (listed,) = [entry for entry in logs if entry["event"] == "watch.listed"]
    assert listed["log_level"] == "info"
    assert (listed["kind"], listed["by"], listed["held"], listed["read_again"]) == (
        "shadows",
        "versions",
        1,
        1,
    )
    assert listed["cpu_ms"] >= 0.0
