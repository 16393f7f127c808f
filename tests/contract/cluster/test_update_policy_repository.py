"""UpdatePolicyRepository behaviour, the same for the in-memory cluster and for Kubernetes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from brupop.domain.cluster.objects import WatchEventType
from brupop.domain.policy.update_policy import CanarySpec, HealthGateSpec, UpdatePolicySpec
from brupop.domain.policy.update_policy_status import (
    HaltReason,
    PolicyPhase,
    UpdatePolicyStatus,
    VersionSeen,
)
from brupop.ports.errors import (
    AlreadyExistsError,
    ConflictError,
    NotFoundError,
    WatchExpiredError,
)
from tests.contract.cluster.conftest import NAMESPACE, PATIENT, Backend, Ports, changes

HALTED = UpdatePolicyStatus(
    phase=PolicyPhase.HALTED,
    message="Halted: node-b failed its health gate (nodeReady).",
    observed_generation=1,
    halted_at=datetime(2026, 11, 30, 9, 0, 0, 250000, tzinfo=UTC),
    halt_reason=HaltReason(node="node-b", check="nodeReady", detail="NotReady for 600 s"),
    failures=1,
)


def _policy(name: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": spec,
    }


def test_without_a_policy_object_there_is_no_default_and_a_version_to_watch_from(
    cluster: Ports,
) -> None:
    snapshot = cluster.policies.read()
    assert (snapshot.default, snapshot.ignored) == (None, ())
    assert snapshot.resource_version


def test_the_default_object_is_read_with_its_spec_and_generation(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy(paused=True, canary={"count": 2, "soakSeconds": 60}))

    default = cluster.policies.read().default

    assert default is not None
    assert (default.name, default.namespace, default.is_default) == ("default", NAMESPACE, True)
    assert default.spec == UpdatePolicySpec(
        paused=True, canary=CanarySpec(count=2, soak_seconds=60)
    )
    assert (default.problem, default.status, default.generation) == (None, None, 1)
    assert default.resource_version and default.uid


def test_objects_with_other_names_are_reported_and_other_namespaces_unseen(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy("staging"))
    backend.apply_policy(_policy("canaries"))
    elsewhere = _policy()
    elsewhere["metadata"]["namespace"] = "other-team"
    backend.apply_policy(elsewhere)

    snapshot = cluster.policies.read()

    assert snapshot.default is None
    assert snapshot.ignored == ("canaries", "staging")


def test_a_spec_the_schema_lets_through_but_brupop_cannot_read_comes_with_its_reason(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy(canary={"selector": "zone in (a"}))

    default = cluster.policies.read().default

    assert default is not None and default.spec is None
    assert default.problem is not None and default.problem.startswith("spec.canary.selector")


def test_the_status_is_written_read_back_and_cleared_field_by_field(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy(paused=True))

    written = cluster.policies.update_status(HALTED)
    assert written.status == HALTED
    assert written.spec == UpdatePolicySpec(paused=True)
    assert written.generation == 1
    assert cluster.policies.read().default == written

    resumed = UpdatePolicyStatus(phase=PolicyPhase.ROLLING, message="Rolling.")
    assert cluster.policies.update_status(resumed).status == resumed
    default = cluster.policies.read().default
    assert default is not None and default.status == resumed


def test_the_first_seen_versions_are_written_read_back_and_replaced_as_a_list(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy())
    first = VersionSeen(version="1.20.0", at=datetime(2026, 11, 30, 9, 0, tzinfo=UTC))
    second = VersionSeen(version="1.21.0-rc.1", at=datetime(2026, 11, 30, 10, 0, tzinfo=UTC))
    both = HALTED.model_copy(update={"versions_first_seen": (first, second)})

    assert cluster.policies.update_status(both).status == both
    only_second = HALTED.model_copy(update={"versions_first_seen": (second,)})
    cluster.policies.update_status(only_second)

    default = cluster.policies.read().default
    assert default is not None and default.status is not None
    assert default.status.versions_first_seen == (second,)


def test_a_spec_change_bumps_the_generation_and_keeps_the_status(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy())
    cluster.policies.update_status(HALTED)

    backend.apply_policy(_policy(paused=True))

    default = cluster.policies.read().default
    assert default is not None
    assert (default.generation, default.status) == (2, HALTED)
    assert default.spec == UpdatePolicySpec(paused=True)


def test_writing_the_status_without_a_default_object_is_not_found(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy("staging"))
    with pytest.raises(NotFoundError):
        cluster.policies.update_status(HALTED)


def test_watch_from_a_read_sees_every_policy_change_in_order(
    backend: Backend, cluster: Ports
) -> None:
    snapshot = cluster.policies.read()
    backend.apply_policy(_policy())
    backend.apply_policy(_policy("staging"))
    cluster.shadows.create("node-a", "uid-a")  # another kind: not a policy change
    cluster.policies.update_status(HALTED)
    backend.apply_policy(_policy(paused=True))
    backend.delete_policy("default")

    events = changes(cluster.policies.watch(snapshot.resource_version, PATIENT), 5)

    assert [(e.type, e.object.name) for e in events] == [
        (WatchEventType.ADDED, "default"),
        (WatchEventType.ADDED, "staging"),
        (WatchEventType.MODIFIED, "default"),
        (WatchEventType.MODIFIED, "default"),
        (WatchEventType.DELETED, "default"),
    ]
    assert events[2].object.status == HALTED
    assert events[3].object.spec == UpdatePolicySpec(paused=True)
    versions = [int(str(e.resource_version)) for e in events]
    assert versions == sorted(versions)


def test_watch_without_a_version_starts_with_every_policy_of_the_namespace_as_added(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy())
    elsewhere = _policy("default")
    elsewhere["metadata"]["namespace"] = "other-team"
    backend.apply_policy(elsewhere)

    events = changes(cluster.policies.watch(None, PATIENT), 1)

    assert [(e.type, e.object.name, e.object.namespace) for e in events] == [
        (WatchEventType.ADDED, "default", NAMESPACE)
    ]


def test_watch_from_a_forgotten_version_expires_and_a_new_read_recovers(
    backend: Backend, cluster: Ports
) -> None:
    old = cluster.policies.read().resource_version
    backend.apply_policy(_policy())
    backend.forget_history()

    with pytest.raises(WatchExpiredError):
        changes(cluster.policies.watch(old, PATIENT))

    snapshot = cluster.policies.read()
    assert snapshot.default is not None
    backend.apply_policy(_policy(paused=True))
    events = changes(cluster.policies.watch(snapshot.resource_version, PATIENT), 1)
    assert [(e.type, e.object.name) for e in events] == [(WatchEventType.MODIFIED, "default")]


# --- what `brupop pause` and `brupop resume` need -------------------------------------------


def test_get_reads_the_default_object_and_is_not_found_without_it(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy("staging"))
    with pytest.raises(NotFoundError):
        cluster.policies.get()

    backend.apply_policy(_policy(paused=True))

    assert cluster.policies.get() == cluster.policies.read().default


def test_create_makes_the_default_object_once(cluster: Ports) -> None:
    created = cluster.policies.create(UpdatePolicySpec(paused=True))

    assert (created.name, created.namespace) == ("default", NAMESPACE)
    assert (created.spec, created.status, created.generation) == (
        UpdatePolicySpec(paused=True),
        None,
        1,
    )
    assert created.resource_version and created.uid
    assert cluster.policies.get() == created
    with pytest.raises(AlreadyExistsError):
        cluster.policies.create(UpdatePolicySpec())


def test_a_policy_created_for_a_pause_is_marked_so_and_deleted_from_its_version(
    backend: Backend, cluster: Ports
) -> None:
    created = cluster.policies.create(UpdatePolicySpec(paused=True), pause_created=True)
    assert created.pause_created and cluster.policies.get().pause_created
    assert created.resource_version is not None
    backend.apply_policy(_policy(paused=True, haltAfterFailures=2))  # someone else's change

    with pytest.raises(ConflictError):
        cluster.policies.delete_default(created.resource_version)

    current = cluster.policies.get()
    assert not current.pause_created, "an apply without the annotation removes the mark"
    assert current.resource_version is not None
    cluster.policies.delete_default(current.resource_version)
    assert cluster.policies.read().default is None
    with pytest.raises(NotFoundError):
        cluster.policies.delete_default(current.resource_version)


def test_set_paused_changes_only_paused_and_bumps_the_generation(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy(haltAfterFailures=3, healthGate={"timeoutSeconds": 60}))
    cluster.policies.update_status(HALTED)
    before = cluster.policies.get()
    assert before.resource_version is not None

    paused = cluster.policies.set_paused(True, before.resource_version)

    expected = UpdatePolicySpec(
        paused=True, halt_after_failures=3, health_gate=HealthGateSpec(timeout_seconds=60)
    )
    assert (paused.spec, paused.status, paused.generation) == (expected, HALTED, 2)
    assert cluster.policies.get() == paused
    assert paused.resource_version is not None
    resumed = cluster.policies.set_paused(False, paused.resource_version)
    assert resumed.spec == expected.model_copy(update={"paused": False})


def test_set_paused_from_a_stale_version_conflicts_and_changes_nothing(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy())
    stale = cluster.policies.get().resource_version
    assert stale is not None
    backend.apply_policy(_policy(haltAfterFailures=2))  # someone else's change in between

    with pytest.raises(ConflictError):
        cluster.policies.set_paused(True, stale)

    current = cluster.policies.get()
    assert current.spec == UpdatePolicySpec(halt_after_failures=2)


def test_setting_paused_on_an_absent_policy_is_not_found(cluster: Ports) -> None:
    with pytest.raises(NotFoundError):
        cluster.policies.set_paused(True, "12345")


def test_a_status_write_from_a_stale_version_conflicts_and_a_current_one_lands(
    backend: Backend, cluster: Ports
) -> None:
    backend.apply_policy(_policy())
    halted = cluster.policies.update_status(HALTED)
    assert halted.resource_version is not None
    rolling = UpdatePolicyStatus(phase=PolicyPhase.ROLLING, message="Rolling.")
    moved_on = cluster.policies.update_status(rolling, halted.resource_version)
    assert moved_on.status == rolling

    with pytest.raises(ConflictError):
        cluster.policies.update_status(HALTED.resumed(), halted.resource_version)

    assert cluster.policies.get().status == rolling
