"""NodeRepository behaviour, the same for the in-memory cluster and for Kubernetes."""

from __future__ import annotations

import pytest

from brupop.domain.cluster.objects import (
    LB_EXCLUSION_LABEL,
    LB_EXCLUSION_VALUE,
    Resources,
    Taint,
    WatchEventType,
)
from brupop.domain.safety.reboot_hooks import HookPhase, hook_cleanup
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.ports.errors import ConflictError, NotFoundError, WatchExpiredError
from tests.contract.cluster.conftest import PATIENT, Backend, Ports, changes

OPTED_IN = {OPT_IN_LABEL: OPT_IN_VALUE}


def test_get_reads_name_uid_labels_and_cordon_state(backend: Backend, cluster: Ports) -> None:
    added = backend.add_node("node-a", labels=OPTED_IN, unschedulable=True)

    node = cluster.nodes.get("node-a")

    assert node.name == "node-a"
    assert node.uid == added.uid and node.uid
    assert node.labels == OPTED_IN
    assert node.unschedulable is True
    assert node.resource_version


def test_node_scheduling_fields_are_read_as_the_capacity_check_needs_them(
    backend: Backend, cluster: Ports
) -> None:
    taints = (
        Taint("dedicated", "db", "NoSchedule"),
        Taint("ToBeDeletedByClusterAutoscaler", "", "NoSchedule"),
    )
    room = Resources(cpu_millis=3920, memory_bytes=15 * 1024**3)
    backend.add_node("node-a", taints=taints, allocatable=room, deleting=True)
    backend.add_node("node-b")

    node, plain = cluster.nodes.get("node-a"), cluster.nodes.get("node-b")

    assert node.taints == taints
    assert node.allocatable == room
    assert node.deleting is True
    assert node.created_at is not None and node.created_at.tzinfo is not None
    assert (plain.taints, plain.allocatable, plain.deleting) == ((), None, False)


def test_missing_node_is_not_found_for_every_operation(cluster: Ports) -> None:
    with pytest.raises(NotFoundError):
        cluster.nodes.get("ghost")
    with pytest.raises(NotFoundError):
        cluster.nodes.set_unschedulable("ghost", True)
    with pytest.raises(NotFoundError):
        cluster.nodes.set_labels("ghost", {"a": "b"})
    with pytest.raises(NotFoundError):
        cluster.nodes.set_annotations("ghost", {"a": "b"})


def test_list_by_label_returns_only_matching_nodes(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a", labels=OPTED_IN)
    backend.add_node("node-b", labels={OPT_IN_LABEL: "1.0.0"})
    backend.add_node("node-c")

    selected = cluster.nodes.list(OPTED_IN)
    everything = cluster.nodes.list()

    assert [n.name for n in selected.items] == ["node-a"]
    assert sorted(n.name for n in everything.items) == ["node-a", "node-b", "node-c"]
    assert everything.resource_version


def test_cordon_and_uncordon(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a")

    assert cluster.nodes.set_unschedulable("node-a", True).unschedulable is True
    assert cluster.nodes.get("node-a").unschedulable is True
    assert cluster.nodes.set_unschedulable("node-a", False).unschedulable is False
    assert cluster.nodes.get("node-a").unschedulable is False


def test_labels_are_added_and_removed_without_touching_others(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a", labels=OPTED_IN)

    excluded = cluster.nodes.set_labels("node-a", {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE})
    assert excluded.labels == OPTED_IN | {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE}

    restored = cluster.nodes.set_labels("node-a", {LB_EXCLUSION_LABEL: None})
    assert restored.labels == OPTED_IN
    assert cluster.nodes.get("node-a").labels == OPTED_IN


def test_annotations_are_added_and_removed(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a")

    cluster.nodes.set_annotations("node-a", {"brupop.bottlerocket.aws/cordoned-by-brupop": "true"})
    assert cluster.nodes.get("node-a").annotations == {
        "brupop.bottlerocket.aws/cordoned-by-brupop": "true"
    }
    cluster.nodes.set_annotations("node-a", {"brupop.bottlerocket.aws/cordoned-by-brupop": None})
    assert cluster.nodes.get("node-a").annotations == {}


def test_an_annotation_write_guarded_by_a_version_the_node_moved_on_from_is_refused(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    read = cluster.nodes.get("node-a")
    cluster.nodes.set_annotations("node-a", {"team": "a"})

    with pytest.raises(ConflictError):
        cluster.nodes.set_annotations(
            "node-a", {"team": "b"}, resource_version=read.resource_version
        )
    current = cluster.nodes.get("node-a")
    written = cluster.nodes.set_annotations(
        "node-a", {"team": "b"}, resource_version=current.resource_version
    )
    assert written.annotations == {"team": "b"}


MARK = "brupop.bottlerocket.aws/cordoned-by-brupop"


def test_a_cordon_and_its_mark_are_one_write_and_so_are_the_uncordon_and_its_removal(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a")
    before = cluster.nodes.list().resource_version

    cordoned = cluster.nodes.set_unschedulable("node-a", True, annotations={MARK: "true"})
    uncordoned = cluster.nodes.set_unschedulable("node-a", False, annotations={MARK: None})
    events = changes(cluster.nodes.watch(before, PATIENT), 2)

    assert (cordoned.unschedulable, cordoned.annotations) == (True, {MARK: "true"})
    assert (uncordoned.unschedulable, uncordoned.annotations) == (False, {})
    assert [(e.object.unschedulable, e.object.annotations) for e in events] == [
        (True, {MARK: "true"}),
        (False, {}),
    ]


def test_a_label_and_its_mark_are_one_write(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a", labels=OPTED_IN)
    before = cluster.nodes.list().resource_version
    mark = "brupop.bottlerocket.aws/lb-excluded-by-brupop"

    cluster.nodes.set_labels(
        "node-a", {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE}, annotations={mark: "true"}
    )
    cluster.nodes.set_labels("node-a", {LB_EXCLUSION_LABEL: None}, annotations={mark: None})
    events = changes(cluster.nodes.watch(before, PATIENT), 2)

    assert [(e.object.labels, e.object.annotations) for e in events] == [
        (OPTED_IN | {LB_EXCLUSION_LABEL: LB_EXCLUSION_VALUE}, {mark: "true"}),
        (OPTED_IN, {}),
    ]


def test_reboot_hook_marks_are_set_found_by_selector_and_removed_together(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a", labels=OPTED_IN)
    backend.add_node("node-b", labels=OPTED_IN)
    phase = HookPhase.BEFORE_REBOOT
    answers = {phase.done_annotation(h): "done" for h in ("ceph-noout", "change-ticket")}

    cluster.nodes.set_labels("node-a", {phase.label: "true"})
    cluster.nodes.set_annotations("node-a", answers)
    asking = cluster.nodes.list({phase.label: "true"})

    assert [n.name for n in asking.items] == ["node-a"]
    assert cluster.nodes.get("node-a").annotations == answers
    labels, annotations = hook_cleanup(phase, ("ceph-noout", "change-ticket"))
    cluster.nodes.set_annotations("node-a", annotations)
    cluster.nodes.set_labels("node-a", labels)
    cleaned = cluster.nodes.get("node-a")
    assert (dict(cleaned.labels), dict(cleaned.annotations)) == (OPTED_IN, {})


def test_watch_sees_new_nodes_and_changes_in_order(backend: Backend, cluster: Ports) -> None:
    backend.add_node("node-a")
    listing = cluster.nodes.list()
    backend.add_node("node-b")
    cluster.nodes.set_unschedulable("node-a", True)

    events = changes(cluster.nodes.watch(listing.resource_version, PATIENT), 2)

    assert [(e.type, e.object.name) for e in events] == [
        (WatchEventType.ADDED, "node-b"),
        (WatchEventType.MODIFIED, "node-a"),
    ]
    assert events[1].object.unschedulable is True


def test_watch_from_a_forgotten_version_expires(backend: Backend, cluster: Ports) -> None:
    old = cluster.nodes.list().resource_version
    backend.add_node("node-a")
    backend.forget_history()
    with pytest.raises(WatchExpiredError):
        changes(cluster.nodes.watch(old, PATIENT))


def test_list_versions_by_label_names_every_node_the_list_gives_at_its_version(
    backend: Backend, cluster: Ports
) -> None:
    backend.add_node("node-a", labels=OPTED_IN)
    backend.add_node("node-b", labels=OPTED_IN)
    backend.add_node("node-c")
    backend.add_node("node-d", labels={**OPTED_IN, "zone": "a"})
    cluster.nodes.set_unschedulable("node-a", True)
    cluster.nodes.set_labels("node-b", {OPT_IN_LABEL: None})
    cluster.nodes.set_labels("node-c", OPTED_IN)

    versions = cluster.nodes.list_versions(OPTED_IN)

    listed = cluster.nodes.list(OPTED_IN)
    assert versions.versions == {n.name: n.resource_version for n in listed.items}
    assert sorted(versions.versions) == ["node-a", "node-c", "node-d"]
    assert versions.resource_version
    assert list(cluster.nodes.list_versions({**OPTED_IN, "zone": "a"}).versions) == ["node-d"]
    everything = cluster.nodes.list_versions().versions
    assert sorted(everything) == ["node-a", "node-b", "node-c", "node-d"]
