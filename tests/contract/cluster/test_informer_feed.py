"""The controller's mirrors fed through the cluster ports, the same for the in-memory cluster
and for Kubernetes over HTTP: list then watch, opted-in Nodes only, 410 relists, resync
repairs, a restart rebuilds."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, cast

import pytest

from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.errors import WatchExpiredError
from brupop.services.controller.mirrors.fleet_mirror import FleetMirror
from brupop.services.runtime import informer as informer_module
from brupop.services.runtime.informer import Following, Informer
from tests.contract.cluster.conftest import Backend, Ports
from tests.support.polling import wait_until

OPTED_IN = {OPT_IN_LABEL: OPT_IN_VALUE}
QUICK = 0.3  # seconds a watch waits for more changes
PATIENCE = 10.0  # seconds a background watch gets to bring a change (ends early on success)
IDLE = ShadowStatus(
    current_version="1.19.0", target_version="1.20.0", current_state=UpdateState.IDLE
)
STAGED = ShadowSpec(state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.20.0")


def _mirror(cluster: Ports) -> FleetMirror:
    return FleetMirror(cluster.shadows, cluster.nodes, RolloutRules(ConcurrencyLimit(1)))


class CountedReads:
    """One of the cluster's repositories, its full lists and its reads by name counted."""

    def __init__(self, repository: object) -> None:
        self._repository = repository
        self.lists = 0
        self.reads = 0

    def list(self, *selector: Any) -> Any:
        self.lists += 1
        return getattr(self._repository, "list")(*selector)  # noqa: B009 (a name mypy knows)

    def get(self, name: str) -> Any:
        self.reads += 1
        return getattr(self._repository, "get")(name)  # noqa: B009

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repository, name)


def _counted(cluster: Ports) -> tuple[FleetMirror, CountedReads, CountedReads]:
    shadows, nodes = CountedReads(cluster.shadows), CountedReads(cluster.nodes)
    fleet = FleetMirror(
        cast(ShadowRepository, shadows),
        cast(NodeRepository, nodes),
        RolloutRules(ConcurrencyLimit(1)),
    )
    return fleet, shadows, nodes


def _resync(fleet: FleetMirror) -> None:
    fleet.catch_up(followed=True, resync=True, gained_leadership=False)


def _follow_for(informer: Informer[Any], seconds: float = QUICK) -> None:
    """What a watch thread does for a while: apply every event, in order."""
    for event in informer.watch(informer.version, seconds):
        informer.apply(event)


@pytest.fixture
def following() -> Iterator[Callable[[FleetMirror], None]]:
    started: list[Informer[Any]] = []

    def start(fleet: FleetMirror) -> None:
        for informer in (fleet.shadow_informer, fleet.node_informer):
            informer.start(following=Following(watch_seconds=1.0, retry_seconds=0.1))
            started.append(informer)

    yield start
    for informer in started:
        informer.stop(0.0)


def test_a_list_fills_the_mirror_with_shadows_and_opted_in_nodes_only(
    backend: Backend, cluster: Ports
) -> None:
    node = backend.add_node("node-a", labels=OPTED_IN)
    backend.add_node("node-b")
    cluster.shadows.create("node-a", node.uid)
    fleet = _mirror(cluster)

    fleet.shadow_informer.relist()
    fleet.node_informer.relist()

    assert fleet.shadows.names() == ["brs-node-a"]
    assert fleet.nodes.names() == ["node-a"]


def test_watch_events_are_applied_in_order(backend: Backend, cluster: Ports) -> None:
    node = backend.add_node("node-a", labels=OPTED_IN)
    fleet = _mirror(cluster)
    fleet.shadow_informer.relist()
    created = cluster.shadows.create("node-a", node.uid)
    cluster.shadows.update_status(created.name, IDLE)
    written = cluster.shadows.replace_spec(created.name, STAGED, None)

    _follow_for(fleet.shadow_informer)

    held = fleet.shadows.get(created.name)
    assert held is not None
    assert held.resource_version == written.resource_version
    assert (held.spec, held.status) == (STAGED, IDLE)
    assert fleet.shadows.take_changes() == {created.name}


def test_a_node_that_loses_the_opt_in_label_leaves_the_mirror(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a", labels=OPTED_IN)
    fleet = _mirror(cluster)
    fleet.node_informer.relist()
    backend.add_node("node-b")  # never opted in: never seen
    cluster.nodes.set_labels("node-a", {OPT_IN_LABEL: None})

    _follow_for(fleet.node_informer)

    assert fleet.nodes.names() == []


def test_a_heartbeat_is_kept_but_wakes_nobody(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a", labels=OPTED_IN)
    fleet = _mirror(cluster)
    fleet.node_informer.relist()
    fleet.nodes.take_changes()
    beat = cluster.nodes.set_annotations("node-a", {"heartbeat": "1"})

    _follow_for(fleet.node_informer)

    held = fleet.nodes.get("node-a")
    assert held is not None and held.resource_version == beat.resource_version
    assert fleet.nodes.take_changes() == set()


def test_an_expired_version_is_followed_by_a_relist(
    backend: Backend, cluster: Ports, following: Callable[[FleetMirror], None]
) -> None:
    node = backend.add_node("node-a", labels=OPTED_IN)
    fleet = _mirror(cluster)
    fleet.shadow_informer.relist()
    fleet.node_informer.relist()
    created = cluster.shadows.create("node-a", node.uid)
    backend.forget_history()
    with pytest.raises(WatchExpiredError):
        _follow_for(fleet.shadow_informer)

    following(fleet)

    wait_until(lambda: fleet.shadows.get(created.name) is not None, "the shadow", seconds=PATIENCE)
    assert fleet.shadow_informer.relists >= 2


def test_a_background_watch_keeps_the_mirror_current(
    backend: Backend, cluster: Ports, following: Callable[[FleetMirror], None]
) -> None:
    node = backend.add_node("node-a", labels=OPTED_IN)
    created = cluster.shadows.create("node-a", node.uid)
    fleet = _mirror(cluster)
    fleet.shadow_informer.relist()
    fleet.node_informer.relist()
    following(fleet)

    cluster.shadows.update_status(created.name, IDLE)
    cluster.nodes.set_unschedulable("node-a", True)
    cluster.shadows.delete(created.name)

    wait_until(lambda: fleet.shadows.get(created.name) is None, "the deletion", seconds=PATIENCE)
    wait_until(
        lambda: getattr(fleet.nodes.get("node-a"), "unschedulable", False),
        "the cordon",
        seconds=PATIENCE,
    )


def test_a_missed_event_is_repaired_by_the_resync(backend: Backend, cluster: Ports) -> None:
    node = backend.add_node("node-a", labels=OPTED_IN)
    created = cluster.shadows.create("node-a", node.uid)
    fleet = _mirror(cluster)
    fleet.shadow_informer.relist()
    updated = cluster.shadows.update_status(created.name, IDLE)  # its event is never applied
    gone = cluster.shadows.create("node-gone", "uid-gone")
    fleet.shadows.put(gone)
    cluster.shadows.delete(gone.name)  # nor this one

    fleet.catch_up(followed=True, resync=True, gained_leadership=False)

    held = fleet.shadows.get(created.name)
    assert held is not None and held.resource_version == updated.resource_version
    assert fleet.shadows.get(gone.name) is None


def test_a_restart_rebuilds_the_same_mirror(backend: Backend, cluster: Ports) -> None:
    for name in ("node-a", "node-b"):
        node = backend.add_node(name, labels=OPTED_IN)
        cluster.shadows.update_status(cluster.shadows.create(name, node.uid).name, IDLE)
    before = _mirror(cluster)
    before.catch_up(followed=True, resync=True, gained_leadership=False)

    after = _mirror(cluster)
    after.catch_up(followed=True, resync=False, gained_leadership=False)

    assert sorted(after.shadows.values(), key=lambda s: s.name) == sorted(
        before.shadows.values(), key=lambda s: s.name
    )
    assert sorted(after.nodes.names()) == ["node-a", "node-b"]


def _two_opted_in_nodes_with_shadows(backend: Backend, cluster: Ports) -> list[str]:
    names = []
    for name in ("node-a", "node-b"):
        node = backend.add_node(name, labels=OPTED_IN)
        names.append(
            cluster.shadows.update_status(cluster.shadows.create(name, node.uid).name, IDLE).name
        )
    return names


def test_a_resync_of_an_unchanged_fleet_lists_versions_and_reads_no_object(
    backend: Backend, cluster: Ports
) -> None:
    _two_opted_in_nodes_with_shadows(backend, cluster)
    fleet, shadows, nodes = _counted(cluster)
    _resync(fleet)  # the first fill: one list of each
    held = sorted(fleet.shadows.values(), key=lambda s: s.name)

    _resync(fleet)
    _resync(fleet)

    assert (shadows.lists, shadows.reads, nodes.lists, nodes.reads) == (1, 0, 1, 0)
    assert sorted(fleet.shadows.values(), key=lambda s: s.name) == held
    assert fleet.shadow_informer.relists == 3


def test_a_resync_reads_again_only_the_objects_whose_events_were_missed(
    backend: Backend, cluster: Ports
) -> None:
    changed, deleted = _two_opted_in_nodes_with_shadows(backend, cluster)
    backend.add_node("node-c")
    fleet, shadows, nodes = _counted(cluster)
    _resync(fleet)
    updated = cluster.shadows.replace_spec(changed, STAGED, None)  # no event of these applied
    cluster.shadows.delete(deleted)
    cluster.nodes.set_labels("node-c", OPTED_IN)

    _resync(fleet)

    assert (shadows.lists, shadows.reads, nodes.lists, nodes.reads) == (1, 1, 1, 1)
    held = fleet.shadows.get(changed)
    assert held is not None and held.resource_version == updated.resource_version
    assert fleet.shadows.names() == [changed]
    assert sorted(fleet.nodes.names()) == ["node-a", "node-b", "node-c"]


def test_a_resync_with_more_missed_changes_than_reads_allowed_lists_them_all(
    backend: Backend, cluster: Ports, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _two_opted_in_nodes_with_shadows(backend, cluster)
    fleet, shadows, _ = _counted(cluster)
    _resync(fleet)
    monkeypatch.setattr(informer_module, "MAX_READS_PER_CHECK", 1)
    written = [cluster.shadows.replace_spec(name, STAGED, None) for name in names]

    _resync(fleet)

    assert (shadows.lists, shadows.reads) == (2, 0)
    assert sorted(fleet.shadows.values(), key=lambda s: s.name) == written
