"""Mirror: the newest version of each object wins, whatever order lists and events come in."""

from __future__ import annotations

from brupop.domain.cluster.objects import Node, VersionListing, WatchEvent, WatchEventType
from brupop.services.runtime.mirror import Mirror


def _node(name: str, version: str, *, cordoned: bool = False) -> Node:
    return Node(name=name, uid=f"uid-{name}", unschedulable=cordoned, resource_version=version)


def _mirror() -> Mirror[Node]:
    return Mirror(lambda n: n.name, lambda n: n.resource_version)


def test_a_late_event_never_takes_an_object_back_to_an_older_version() -> None:
    mirror = _mirror()
    mirror.put(_node("a", "12", cordoned=True))  # our own write, put in at once

    late = WatchEvent(WatchEventType.MODIFIED, _node("a", "11"), "11")

    assert not mirror.apply(late)
    assert mirror.get("a") == _node("a", "12", cordoned=True)


def test_versions_compare_as_numbers_not_as_text() -> None:
    mirror = _mirror()
    mirror.put(_node("a", "9"))
    assert mirror.put(_node("a", "10", cordoned=True))
    assert mirror.get("a") == _node("a", "10", cordoned=True)


def test_a_lagging_list_keeps_what_is_newer_than_it() -> None:
    mirror = _mirror()
    mirror.put(_node("a", "5"))
    mirror.put(_node("b", "20"))  # created after the list was taken
    mirror.put(_node("c", "6"))  # deleted before the list was taken

    mirror.reconcile([_node("a", "4")], "15")

    assert sorted(mirror.names()) == ["a", "b"]
    assert mirror.get("a") == _node("a", "5")


def test_a_delete_older_than_what_is_held_is_ignored() -> None:
    mirror = _mirror()
    mirror.put(_node("a", "30"))
    assert not mirror.apply(WatchEvent(WatchEventType.DELETED, _node("a", "29"), "29"))
    assert mirror.apply(WatchEvent(WatchEventType.DELETED, _node("a", "31"), "31"))
    assert mirror.names() == []


def test_changes_are_collected_until_taken() -> None:
    mirror = _mirror()
    mirror.put(_node("a", "1"))
    mirror.put(_node("b", "2"))
    assert mirror.take_changes() == {"a", "b"}
    assert mirror.take_changes() == set()


def test_a_list_of_as_many_names_as_held_still_drops_the_ones_it_does_not_show() -> None:
    mirror = _mirror()
    mirror.put(_node("a", "1"))
    mirror.put(_node("b", "2"))
    mirror.take_changes()

    changed = mirror.reconcile([_node("b", "2"), _node("c", "3")], "10")

    assert sorted(mirror.names()) == ["b", "c"]
    assert changed == 2
    assert mirror.take_changes() == {"a", "c"}


def test_a_list_showing_every_held_name_at_its_held_version_changes_nothing() -> None:
    mirror = _mirror()
    mirror.reconcile([_node("a", "1"), _node("b", "2")], "5")
    mirror.take_changes()

    assert mirror.reconcile([_node("a", "1"), _node("b", "2")], "6") == 0
    assert sorted(mirror.names()) == ["a", "b"]
    assert mirror.take_changes() == set()


def test_a_list_of_versions_drops_what_it_does_not_show_and_names_what_to_read_again() -> None:
    mirror = _mirror()
    for name, version in (("same", "5"), ("ours-newer", "20"), ("gone", "6"), ("changed", "7")):
        mirror.put(_node(name, version))
    listing = VersionListing(
        {"same": "5", "ours-newer": "19", "changed": "8", "new": "9"}, resource_version="15"
    )

    assert sorted(mirror.reconcile_versions(listing)) == ["changed", "new"]
    assert sorted(mirror.names()) == ["changed", "ours-newer", "same"]


def test_an_object_newer_than_a_list_of_versions_is_kept_though_missing_from_it() -> None:
    mirror = _mirror()
    mirror.put(_node("a", "5"))
    mirror.put(_node("b", "20"))  # created after the list was taken

    assert mirror.reconcile_versions(VersionListing({"a": "5"}, resource_version="15")) == []
    assert sorted(mirror.names()) == ["a", "b"]


def test_a_list_of_versions_that_agrees_with_the_mirror_changes_nothing() -> None:
    mirror = _mirror()
    mirror.put(_node("a", "5"))
    mirror.put(_node("b", "6"))

    mirror.take_changes()

    assert mirror.reconcile_versions(VersionListing({"b": "6", "a": "5"}, "9")) == []
    assert sorted(mirror.names()) == ["a", "b"]
    assert mirror.take_changes() == set()


def test_a_refreshing_list_replaces_objects_held_at_the_listed_version_but_not_newer_ones() -> None:
    held_labels: list[str] = []
    mirror: Mirror[Node] = Mirror(
        lambda n: n.name,
        lambda n: n.resource_version,
        keep=lambda n: Node(
            n.name,
            n.uid,
            {k: v for k, v in n.labels.items() if k in held_labels},
            resource_version=n.resource_version,
        ),
    )
    zoned = {"zone": "a"}
    mirror.reconcile([Node("a", "uid-a", zoned, resource_version="5")], "5")
    mirror.put(Node("b", "uid-b", zoned, resource_version="9"))
    held_labels.append("zone")

    mirror.reconcile(
        [
            Node("a", "uid-a", zoned, resource_version="5"),
            Node("b", "uid-b", {}, resource_version="8"),
        ],
        "8",
        refresh=True,
    )

    assert (mirror.get("a"), mirror.get("b")) == (
        Node("a", "uid-a", zoned, resource_version="5"),
        Node("b", "uid-b", {}, resource_version="9"),
    )


def test_objects_without_a_version_are_replaced_by_every_put_and_removed_by_every_delete() -> None:
    mirror: Mirror[Node] = Mirror(lambda n: n.name, lambda n: None)  # as pods and accounts
    mirror.reconcile([_node("a", "1"), _node("b", "1")], "5")
    assert mirror.apply(WatchEvent(WatchEventType.MODIFIED, _node("a", "6", cordoned=True), "6"))
    assert mirror.apply(WatchEvent(WatchEventType.DELETED, _node("b", "7"), "7"))

    mirror.reconcile([_node("a", "8")], "8")

    assert mirror.get("a") == _node("a", "8")
    assert mirror.names() == ["a"]
