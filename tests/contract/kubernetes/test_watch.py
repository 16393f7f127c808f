"""Watches over HTTP: a dropped stream resumes without missing a change; 410 means re-list."""

from __future__ import annotations

import gc
from collections.abc import Generator

import pytest
from kubernetes.client import CoreV1Api

from brupop.adapters.kubernetes.api import watching
from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.kubernetes.resources.nodes import node_from_object
from brupop.domain.cluster.objects import WatchBookmark, WatchEvent, WatchEventType
from brupop.domain.shadow import Shadow
from brupop.ports.errors import UnavailableError, WatchExpiredError
from brupop.services.apiserver.shadow_feed import ShadowFeed
from brupop.services.runtime.informer import WATCH_SECONDS, Following, Informer
from brupop.services.runtime.mirror import Mirror
from tests.contract.kubernetes.conftest import SHADOWS_PATH, sent, status
from tests.support.kube_emulator import KubeEmulator
from tests.support.polling import wait_until


def watch_queries(emulator: KubeEmulator) -> list[dict[str, str]]:
    return [s.query for s in sent(emulator) if s.query.get("watch") == "True"]


def test_dropped_stream_is_resumed_from_the_last_version_without_missing_a_change(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    start = kube.shadows.list().resource_version
    kube.shadows.create("node-a", "uid-a")
    events = kube.shadows.watch(start, 3.0)
    assert isinstance(events, Generator)

    first = next(events)
    emulator.drop_watches()  # the stream ends under the watcher
    kube.shadows.create("node-b", "uid-b")  # a change nobody streamed yet
    second = next(events)
    events.close()

    assert [(e.type, e.object.name) for e in (first, second)] == [
        (WatchEventType.ADDED, "brs-node-a"),
        (WatchEventType.ADDED, "brs-node-b"),
    ]
    assert [q["resourceVersion"] for q in watch_queries(emulator)] == [
        str(start),
        str(first.resource_version),
    ]


def test_version_compacted_while_disconnected_expires_and_a_relist_sees_everything(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    start = kube.shadows.list().resource_version
    kube.shadows.create("node-a", "uid-a")
    events = kube.shadows.watch(start, 3.0)
    next(events)
    emulator.drop_watches()
    kube.shadows.create("node-b", "uid-b")
    emulator.compact()

    with pytest.raises(WatchExpiredError, match="410 Expired"):
        next(events)

    listing = kube.shadows.list()
    assert sorted(s.name for s in listing.items) == ["brs-node-a", "brs-node-b"]
    kube.shadows.delete("brs-node-a")
    stream = kube.shadows.watch(listing.resource_version, 0.3)
    after = [(e.type, e.object.name) for e in stream if isinstance(e, WatchEvent)]
    assert after == [(WatchEventType.DELETED, "brs-node-a")]


def test_bookmarks_move_the_resume_point_without_events(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    bookmark = {
        "type": "BOOKMARK",
        "object": {"kind": "BottlerocketShadow", "metadata": {"resourceVersion": "150"}},
    }
    emulator[f"get {SHADOWS_PATH}"][:1] << 200 << (bookmark,)

    assert list(kube.shadows.watch("120", 0.3)) == [WatchBookmark("150")]

    assert [q["resourceVersion"] for q in watch_queries(emulator)] == ["120", "150"]


def test_an_informer_resumes_its_next_watch_from_the_last_bookmark_not_the_last_event(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    mirror: Mirror[Shadow] = Mirror(lambda s: s.name, lambda s: s.resource_version)
    informer = Informer("shadows", kube.shadows.list, kube.shadows.watch, mirror)
    informer.relist()
    bookmark = {
        "type": "BOOKMARK",
        "object": {"kind": "BottlerocketShadow", "metadata": {"resourceVersion": "9000"}},
    }
    # The slice counts every GET of the path: the list was the first, the watch is the second.
    emulator[f"get {SHADOWS_PATH}"][1:2] << 200 << (bookmark,)

    for item in informer.watch(informer.version, 0.2):
        informer.apply(item)

    assert informer.version == "9000"


def test_a_stream_that_keeps_ending_empty_is_unavailable(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator[f"get {SHADOWS_PATH}"] << 200 << b""

    with pytest.raises(UnavailableError, match="keeps ending"):
        list(kube.shadows.watch("120", 5.0))

    assert len(watch_queries(emulator)) == 5


def test_unreadable_shadows_are_skipped_in_lists(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.shadows.create("node-a", "uid-a")
    start = kube.shadows.list().resource_version
    (
        emulator[f"get {SHADOWS_PATH}"]
        << 200
        << {
            "kind": "BottlerocketShadowList",
            "metadata": {"resourceVersion": str(start)},
            "items": [
                {"metadata": {"name": "hand-made"}, "spec": {"state": "Idle"}},
                {"metadata": {"name": "brs-node-b"}, "spec": {"state": "Idle"}},
                {
                    "metadata": {"name": "brs-node-a", "namespace": "x"},
                    "spec": {"state": "Exploded"},
                },
            ],
        }
    )

    assert [(s.name, s.node_name) for s in kube.shadows.list().items] == [("brs-node-b", "node-b")]


def test_a_paged_list_whose_continue_token_expired_starts_again_from_its_first_page(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    for name in ("node-a", "node-b", "node-c"):
        emulator.add_node(name)
    # The second request is the first continued page: the API has compacted its snapshot.
    expired = status(410, "Expired", "The provided continue parameter is too old")
    emulator["get /api/v1/nodes"][1:2] << 410 << expired
    source = watching.WatchSource(
        "list nodes", CoreV1Api(kube.api_client).list_node, node_from_object
    )

    items, _ = watching.list_items(ApiCalls(kube.api_client), source, page_size=2)

    assert sorted(node.name for node, _ in items) == ["node-a", "node-b", "node-c"]
    continued = ["continue" in request.params for request in emulator.requests]
    assert continued == [False, True, False, True]


def test_a_selected_watch_gets_a_bookmark_before_its_timeout_when_others_changed_meanwhile(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    selector = {"opted": "in"}
    emulator.add_node("unselected")
    listed = kube.nodes.list(selector).resource_version

    # Changes the selection leaves out, after the list the watch starts from: however late the
    # watch opens, it has seen them by its bookmark's time (2 s before its timeout).
    for index in range(4):
        kube.nodes.set_labels("unselected", {"beat": str(index)})
    items = list(kube.nodes.watch(listed, 3.0, selector))

    assert [type(item) for item in items] == [WatchBookmark]
    (bookmark,) = items
    assert listed is not None and bookmark.resource_version is not None
    assert int(bookmark.resource_version) > int(listed)


def test_a_following_informer_resumes_each_ended_watch_from_its_last_version_without_a_list(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    mirror: Mirror[Shadow] = Mirror(lambda s: s.name, lambda s: s.resource_version)
    informer = Informer("shadows", kube.shadows.list, kube.shadows.watch, mirror)
    # Watches of 1 to 2 s: several end within the test.
    informer.start(following=Following(watch_seconds=1.0, retry_seconds=0.1))
    try:
        wait_until(lambda: mirror.filled, "the first list")
        first = kube.shadows.create("node-a", "uid-a")
        wait_until(lambda: mirror.get(first.name) is not None, "the first shadow")
        opened = len(watch_queries(emulator))
        wait_until(lambda: len(watch_queries(emulator)) > opened, "a watch ended and resumed")
        second = kube.shadows.create("node-b", "uid-b")

        wait_until(lambda: mirror.get(second.name) is not None, "the shadow created after")
    finally:
        informer.stopping.set()
        kube.shadows.create("node-z", "uid-z")  # an event, after which the thread ends
        informer.stop(5.0)
    assert informer.relists == 1
    versions = [q.get("resourceVersion") for q in watch_queries(emulator)]
    assert first.resource_version in versions
    assert all(versions), versions  # every watch resumed from a version: no list again


def test_the_shadow_feed_holds_its_watch_open_for_minutes_with_bookmarks(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    feed = ShadowFeed(kube.shadows)
    feed.start()
    try:
        wait_until(lambda: watch_queries(emulator), "the feed's first watch")
    finally:
        feed.stop(0.0)
        kube.shadows.create("node-z", "uid-z")  # an event, after which the thread ends
        feed.stop(5.0)
    (query,) = watch_queries(emulator)
    assert int(query["timeoutSeconds"]) >= WATCH_SECONDS
    assert query["allowWatchBookmarks"] == "True"


def test_a_paged_list_decodes_each_page_with_the_collector_paused_and_leaves_it_as_found(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    for name in ("node-a", "node-b", "node-c"):
        emulator.add_node(name)
    collector_on: list[bool] = []

    def noting(raw: dict[str, object]) -> object:
        collector_on.append(gc.isenabled())
        return node_from_object(raw)

    source = watching.WatchSource("list nodes", CoreV1Api(kube.api_client).list_node, noting)
    items, _ = watching.list_items(ApiCalls(kube.api_client), source, page_size=2)

    assert len(items) == 3
    assert collector_on == [False, False, False]  # a page's objects die before a collection
    assert gc.isenabled()
