"""ShadowRepository behaviour, the same for the in-memory cluster and for Kubernetes."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brupop.domain.cluster.objects import WatchEventType
from brupop.domain.shadow import ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import (
    AlreadyExistsError,
    ConflictError,
    NotFoundError,
    WatchExpiredError,
)
from tests.contract.cluster.conftest import NAMESPACE, PATIENT, Backend, Ports, changes

NODE = "ip-192-168-141-69.us-west-2.compute.internal"
SHADOW = f"brs-{NODE}"
STAGED = ShadowSpec(
    state=UpdateState.STAGED_AND_PERFORMED_UPDATE,
    state_transition_timestamp=datetime(2026, 1, 5, 10, 0, 0, 123456, tzinfo=UTC),
    version="1.20.0",
)
REPORTED = ShadowStatus(
    current_version="1.19.2",
    target_version="1.20.0",
    current_state=UpdateState.IDLE,
)
QUICK = 0.3  # seconds a watch waits for more changes


def test_create_makes_an_idle_shadow_owned_by_its_node(cluster: Ports) -> None:
    created = cluster.shadows.create(NODE, "node-uid-1")

    assert created.name == SHADOW
    assert created.namespace == NAMESPACE
    assert (created.node_name, created.node_uid) == (NODE, "node-uid-1")
    assert created.spec == ShadowSpec()
    assert created.status is None
    assert created.uid
    assert created.resource_version
    assert cluster.shadows.get(SHADOW) == created


def test_creating_a_shadow_twice_is_already_exists(cluster: Ports) -> None:
    cluster.shadows.create(NODE, "node-uid-1")
    with pytest.raises(AlreadyExistsError):
        cluster.shadows.create(NODE, "node-uid-1")


def test_missing_shadow_is_not_found_for_every_operation(cluster: Ports) -> None:
    with pytest.raises(NotFoundError):
        cluster.shadows.get(SHADOW)
    with pytest.raises(NotFoundError):
        cluster.shadows.update_status(SHADOW, REPORTED)
    with pytest.raises(NotFoundError):
        cluster.shadows.replace_spec(SHADOW, STAGED, None)
    with pytest.raises(NotFoundError):
        cluster.shadows.delete(SHADOW)


def test_status_and_spec_are_written_independently(cluster: Ports) -> None:
    created = cluster.shadows.create(NODE, "node-uid-1")

    with_status = cluster.shadows.update_status(SHADOW, REPORTED)
    assert with_status.status == REPORTED
    assert with_status.spec == ShadowSpec()
    assert with_status.resource_version != created.resource_version

    with_spec = cluster.shadows.replace_spec(SHADOW, STAGED, with_status.resource_version)
    assert with_spec.spec == STAGED
    assert with_spec.status == REPORTED
    assert cluster.shadows.get(SHADOW) == with_spec


def test_status_fields_set_to_none_are_cleared(cluster: Ports) -> None:
    cluster.shadows.create(NODE, "node-uid-1")
    failed = REPORTED.model_copy(
        update={
            "current_state": UpdateState.ERROR_RESET,
            "crash_count": 2,
            "state_transition_failure_timestamp": datetime(2026, 1, 5, 11, 0, tzinfo=UTC),
        }
    )
    cluster.shadows.update_status(SHADOW, failed)

    recovered = cluster.shadows.update_status(SHADOW, REPORTED)

    assert recovered.status == REPORTED
    assert cluster.shadows.get(SHADOW).status == REPORTED


def test_spec_write_from_a_stale_resource_version_is_a_conflict(cluster: Ports) -> None:
    created = cluster.shadows.create(NODE, "node-uid-1")
    cluster.shadows.update_status(SHADOW, REPORTED)  # the agent reports meanwhile

    with pytest.raises(ConflictError):
        cluster.shadows.replace_spec(SHADOW, STAGED, created.resource_version)

    assert cluster.shadows.get(SHADOW).spec == ShadowSpec()


def test_a_status_write_from_a_stale_version_conflicts_and_keeps_the_newer_report(
    cluster: Ports,
) -> None:
    created = cluster.shadows.create(NODE, "node-uid-1")
    cluster.shadows.update_status(SHADOW, REPORTED)  # the agent reports after that read
    failed = REPORTED.model_copy(update={"crash_count": 1})

    with pytest.raises(ConflictError):
        cluster.shadows.update_status(SHADOW, failed, created.resource_version)

    assert cluster.shadows.get(SHADOW).status == REPORTED


def test_a_status_write_from_the_current_version_lands(cluster: Ports) -> None:
    cluster.shadows.create(NODE, "node-uid-1")
    current = cluster.shadows.update_status(SHADOW, REPORTED)
    failed = REPORTED.model_copy(update={"crash_count": 1})

    written = cluster.shadows.update_status(SHADOW, failed, current.resource_version)

    assert written.status == failed
    assert cluster.shadows.get(SHADOW).status == failed


def test_spec_write_without_a_resource_version_always_lands(cluster: Ports) -> None:
    cluster.shadows.create(NODE, "node-uid-1")
    cluster.shadows.update_status(SHADOW, REPORTED)

    written = cluster.shadows.replace_spec(SHADOW, STAGED, None)

    assert written.spec == STAGED
    assert cluster.shadows.get(SHADOW).spec == STAGED


def test_spec_back_to_default_clears_timestamp_and_version(cluster: Ports) -> None:
    cluster.shadows.create(NODE, "node-uid-1")
    cluster.shadows.replace_spec(SHADOW, STAGED, None)

    reset = cluster.shadows.replace_spec(SHADOW, ShadowSpec(), None)

    assert reset.spec == ShadowSpec()
    assert cluster.shadows.get(SHADOW).spec == ShadowSpec()


def test_list_returns_every_shadow_and_a_version_to_watch_from(cluster: Ports) -> None:
    cluster.shadows.create("node-a", "uid-a")
    cluster.shadows.create("node-b", "uid-b")

    listing = cluster.shadows.list()

    assert sorted(s.name for s in listing.items) == ["brs-node-a", "brs-node-b"]
    assert listing.resource_version


def test_watch_from_a_listing_sees_later_changes_in_order(cluster: Ports) -> None:
    cluster.shadows.create("node-a", "uid-a")
    listing = cluster.shadows.list()
    cluster.shadows.create("node-b", "uid-b")
    cluster.shadows.update_status("brs-node-a", REPORTED)
    cluster.shadows.replace_spec("brs-node-b", STAGED, None)
    cluster.shadows.delete("brs-node-a")

    events = changes(cluster.shadows.watch(listing.resource_version, PATIENT), 4)

    assert [(e.type, e.object.name) for e in events] == [
        (WatchEventType.ADDED, "brs-node-b"),
        (WatchEventType.MODIFIED, "brs-node-a"),
        (WatchEventType.MODIFIED, "brs-node-b"),
        (WatchEventType.DELETED, "brs-node-a"),
    ]
    assert events[1].object.status == REPORTED
    assert events[2].object.spec == STAGED
    versions = [int(str(e.resource_version)) for e in events]
    assert versions == sorted(versions)


def test_watch_resumes_after_the_last_event_it_gave(cluster: Ports) -> None:
    listing = cluster.shadows.list()
    cluster.shadows.create("node-a", "uid-a")
    (first,) = changes(cluster.shadows.watch(listing.resource_version, PATIENT), 1)
    cluster.shadows.update_status("brs-node-a", REPORTED)

    resumed = changes(cluster.shadows.watch(first.resource_version, PATIENT), 1)

    assert [(e.type, e.object.status) for e in resumed] == [(WatchEventType.MODIFIED, REPORTED)]


def test_watch_without_a_version_starts_with_every_shadow_as_added(cluster: Ports) -> None:
    cluster.shadows.create("node-a", "uid-a")

    events = changes(cluster.shadows.watch(None, PATIENT), 1)

    assert [(e.type, e.object.name) for e in events] == [(WatchEventType.ADDED, "brs-node-a")]


def test_watch_with_nothing_new_returns_empty_after_its_timeout(cluster: Ports) -> None:
    cluster.shadows.create("node-a", "uid-a")
    listing = cluster.shadows.list()
    assert changes(cluster.shadows.watch(listing.resource_version, QUICK)) == []


def test_watch_from_a_forgotten_version_expires_and_a_relist_recovers(
    backend: Backend, cluster: Ports
) -> None:
    old = cluster.shadows.list().resource_version
    cluster.shadows.create("node-a", "uid-a")
    backend.forget_history()

    with pytest.raises(WatchExpiredError):
        changes(cluster.shadows.watch(old, PATIENT))

    relisted = cluster.shadows.list()
    assert [s.name for s in relisted.items] == ["brs-node-a"]
    cluster.shadows.update_status("brs-node-a", REPORTED)
    events = changes(cluster.shadows.watch(relisted.resource_version, PATIENT), 1)
    assert [(e.type, e.object.name) for e in events] == [(WatchEventType.MODIFIED, "brs-node-a")]


def test_list_versions_names_every_shadow_the_list_gives_at_its_version(cluster: Ports) -> None:
    first = cluster.shadows.create("node-a", "uid-a")
    second = cluster.shadows.create("node-b", "uid-b")
    cluster.shadows.update_status(first.name, REPORTED)
    cluster.shadows.delete(second.name)
    cluster.shadows.create("node-c", "uid-c")

    listed = cluster.shadows.list()
    versions = cluster.shadows.list_versions()

    assert versions.versions == {s.name: s.resource_version for s in listed.items}
    assert sorted(versions.versions) == ["brs-node-a", "brs-node-c"]
    assert versions.resource_version
