"""The exact requests the shadow adapter sends: paths, verbs, content types and bodies."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brupop.adapters.kubernetes.api import watching
from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.shadow import ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from tests.contract.kubernetes.conftest import NAMESPACE, SHADOWS_PATH, Sent, sent
from tests.support.kube_api_rules import KINDS
from tests.support.kube_emulator import KubeEmulator

NODE = "ip-192-168-141-69.us-west-2.compute.internal"
SHADOW_PATH = f"{SHADOWS_PATH}/brs-{NODE}"
MERGE = "application/merge-patch+json"
V2 = {"apiVersion": "brupop.bottlerocket.aws/v2", "kind": "BottlerocketShadow"}


def test_create_posts_the_shadow_owned_by_its_node(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.shadows.create(NODE, "e77d33d5-2f4f-491e-9755-cb9ee36545b7")

    assert sent(emulator) == [
        Sent(
            "POST",
            SHADOWS_PATH,
            {},
            "application/json",
            V2
            | {
                "metadata": {
                    "name": f"brs-{NODE}",
                    "namespace": NAMESPACE,
                    "ownerReferences": [
                        {
                            "apiVersion": "v1",
                            "kind": "Node",
                            "name": NODE,
                            "uid": "e77d33d5-2f4f-491e-9755-cb9ee36545b7",
                        }
                    ],
                },
                "spec": {"state": "Idle", "state_transition_timestamp": None, "version": None},
            },
        )
    ]


def test_status_is_merge_patched_through_the_status_subresource(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.shadows.create(NODE, "uid-1")
    status = ShadowStatus(
        current_version="1.6.1",
        target_version="1.8.0",
        current_state=UpdateState.STAGED_AND_PERFORMED_UPDATE,
    )

    kube.shadows.update_status(f"brs-{NODE}", status)

    assert sent(emulator)[-1] == Sent(
        "PATCH",
        f"{SHADOW_PATH}/status",
        {},
        MERGE,
        V2
        | {
            "status": {
                "current_version": "1.6.1",
                "target_version": "1.8.0",
                "current_state": "StagedAndPerformedUpdate",
                "crash_count": 0,
                "state_transition_failure_timestamp": None,
            }
        },
    )


def test_a_guarded_status_write_carries_the_version_it_was_read_at(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    created = kube.shadows.create(NODE, "uid-1")
    status = ShadowStatus(
        current_version="1.6.1", target_version="1.8.0", current_state=UpdateState.IDLE
    )

    kube.shadows.update_status(f"brs-{NODE}", status, created.resource_version)

    (patch,) = [request for request in sent(emulator) if request.method == "PATCH"]
    assert (patch.path, patch.content_type) == (f"{SHADOW_PATH}/status", MERGE)
    assert patch.body["metadata"] == {"resourceVersion": created.resource_version}


def test_spec_is_merge_patched_with_the_callers_resource_version(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    created = kube.shadows.create(NODE, "uid-1")
    spec = ShadowSpec(
        state=UpdateState.REBOOTED_INTO_UPDATE,
        state_transition_timestamp=datetime(2022, 6, 28, 7, 12, 21, 899994, tzinfo=UTC),
        version="1.8.0",
    )

    kube.shadows.replace_spec(f"brs-{NODE}", spec, created.resource_version)

    assert sent(emulator)[-1] == Sent(
        "PATCH",
        SHADOW_PATH,
        {},
        MERGE,
        V2
        | {
            "metadata": {"resourceVersion": created.resource_version},
            "spec": {
                "state": "RebootedIntoUpdate",
                "state_transition_timestamp": "2022-06-28T07:12:21.899994+00:00",
                "version": "1.8.0",
            },
        },
    )


def test_unconditional_spec_write_reads_the_version_to_guard_with(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    created = kube.shadows.create(NODE, "uid-1")

    kube.shadows.replace_spec(f"brs-{NODE}", ShadowSpec(), None)

    get, patch = sent(emulator)[-2:]
    assert (get.method, get.path) == ("GET", SHADOW_PATH)
    assert (patch.method, patch.path) == ("PATCH", SHADOW_PATH)
    assert patch.body["metadata"] == {"resourceVersion": created.resource_version}


def test_get_list_and_delete_address_the_namespaced_collection(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    kube.shadows.create(NODE, "uid-1")
    kube.shadows.get(f"brs-{NODE}")
    kube.shadows.list()
    kube.shadows.delete(f"brs-{NODE}")

    assert [(s.method, s.path, s.query) for s in sent(emulator)[1:]] == [
        ("GET", SHADOW_PATH, {}),
        ("GET", SHADOWS_PATH, {"limit": "500"}),
        ("DELETE", SHADOW_PATH, {}),
    ]


def test_watch_asks_for_changes_after_a_version_with_bookmarks_and_a_server_timeout(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    version = kube.shadows.list().resource_version

    assert list(kube.shadows.watch(version, 0.2)) == []

    watch = sent(emulator)[-1]
    assert (watch.method, watch.path) == ("GET", SHADOWS_PATH)
    assert watch.query == {
        "watch": "True",
        "resourceVersion": str(version),
        "allowWatchBookmarks": "True",
        "timeoutSeconds": "1",
    }


def test_shadow_of_the_seed_log_is_read_with_its_owner_and_nanosecond_timestamp(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator.put_object(
        KINDS["brupop.bottlerocket.aws", "v2", "bottlerocketshadows"],
        V2
        | {
            "metadata": {
                "name": f"brs-{NODE}",
                "namespace": NAMESPACE,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "name": NODE,
                        "uid": "e77d33d5-2f4f-491e-9755-cb9ee36545b7",
                    }
                ],
            },
            "spec": {
                "state": "RebootedIntoUpdate",
                "state_transition_timestamp": "2022-06-28T07:12:21.899994323+00:00",
                "version": "1.8.0",
            },
            "status": {
                "current_version": "1.6.1",
                "target_version": "1.8.0",
                "current_state": "StagedAndPerformedUpdate",
                "crash_count": 0,
            },
        },
    )

    shadow = kube.shadows.get(f"brs-{NODE}")

    assert (shadow.node_name, shadow.node_uid) == (NODE, "e77d33d5-2f4f-491e-9755-cb9ee36545b7")
    assert shadow.spec.state is UpdateState.REBOOTED_INTO_UPDATE
    assert shadow.spec.state_transition_timestamp == datetime(
        2022, 6, 28, 7, 12, 21, 899994, tzinfo=UTC
    )
    assert shadow.status is not None
    assert shadow.status.current_state is UpdateState.STAGED_AND_PERFORMED_UPDATE


def test_a_list_longer_than_a_page_is_read_page_after_page(
    kube: KubernetesCluster, emulator: KubeEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watching, "LIST_PAGE_SIZE", 2)
    for index in range(5):
        kube.shadows.create(f"node-{index}", f"uid-{index}")
    before = len(sent(emulator))

    listing = kube.shadows.list()

    assert sorted(s.node_name for s in listing.items) == [f"node-{i}" for i in range(5)]
    pages = [s.query for s in sent(emulator)[before:]]
    assert [page.get("limit") for page in pages] == ["2", "2", "2"]
    assert "continue" not in pages[0] and all("continue" in page for page in pages[1:])
