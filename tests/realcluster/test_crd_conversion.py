"""The shadow's conversion webhook, called by a real kube-apiserver: v2 is stored, v1 is served
through brupop's `/crdconvert`, and nothing a version cannot express is lost on the way."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from brupop.domain.conversion import STASH_ANNOTATION
from tests.realcluster.conftest import ControlPlane
from tests.realcluster.crd_webhook import (
    GROUP,
    JSON,
    SHADOWS,
    InstalledCrds,
    installed_crds,
    shadow_object,
)

MANY_SHADOWS = 1500
STATUS_V2: JSON = {
    "current_version": "1.19.2",
    "target_version": "1.20.0",
    "current_state": "StagedAndPerformedUpdate",
    "crash_count": 2,
    "state_transition_failure_timestamp": "2026-01-02T03:04:05Z",
}
SPEC_V2: JSON = {
    "state": "StagedAndPerformedUpdate",
    "state_transition_timestamp": "2026-01-02T03:00:00Z",
    "version": "1.20.0",
}


@pytest.fixture(scope="module")
def crds(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InstalledCrds]:
    yield from installed_crds(control_plane.api, tmp_path_factory.mktemp("webhook-tls"))


def create_v2(crds: InstalledCrds, namespace: str, name: str, **metadata: Any) -> JSON:
    body = shadow_object(name, SPEC_V2, version="v2", **metadata)
    crds.objects.create_namespaced_custom_object(GROUP, "v2", namespace, SHADOWS, body)
    written: JSON = crds.objects.patch_namespaced_custom_object_status(
        GROUP, "v2", namespace, SHADOWS, name, {"status": STATUS_V2}
    )
    return written


def read(crds: InstalledCrds, namespace: str, name: str, version: str) -> JSON:
    found: JSON = crds.objects.get_namespaced_custom_object(
        GROUP, version, namespace, SHADOWS, name
    )
    return found


def test_a_v2_shadow_reads_as_v1_through_the_webhook(crds: InstalledCrds, namespace: str) -> None:
    written = create_v2(crds, namespace, "brs-a", labels={"team": "blue"}, annotations={"n": "1"})

    v1 = read(crds, namespace, "brs-a", "v1")

    assert v1["apiVersion"] == f"{GROUP}/v1"
    assert v1["spec"] == {**SPEC_V2, "state": "StagedUpdate"}
    assert v1["status"] == {
        "current_version": "1.19.2",
        "target_version": "1.20.0",
        "current_state": "StagedUpdate",
    }
    assert v1["metadata"]["labels"] == {"team": "blue"}
    assert v1["metadata"]["annotations"]["n"] == "1"
    assert STASH_ANNOTATION in v1["metadata"]["annotations"]  # what v1 cannot hold
    assert v1["metadata"]["uid"] == written["metadata"]["uid"]
    assert v1["metadata"]["resourceVersion"] == written["metadata"]["resourceVersion"]


def test_a_v1_write_reads_back_as_v2_keeping_labels_annotations_and_v2_fields(
    crds: InstalledCrds, namespace: str
) -> None:
    create_v2(crds, namespace, "brs-b")
    v1 = read(crds, namespace, "brs-b", "v1")
    v1["metadata"].setdefault("labels", {})["edited-by"] = "v1-client"
    v1["metadata"]["annotations"]["note"] = "kept"
    v1["spec"]["state"] = "RebootedIntoUpdate"
    crds.objects.replace_namespaced_custom_object(GROUP, "v1", namespace, SHADOWS, "brs-b", v1)

    v2 = read(crds, namespace, "brs-b", "v2")

    assert v2["spec"] == {**SPEC_V2, "state": "RebootedIntoUpdate"}
    assert v2["status"] == STATUS_V2  # crash_count and the failure timestamp came back
    assert v2["metadata"]["labels"] == {"edited-by": "v1-client"}
    assert v2["metadata"]["annotations"] == {"note": "kept"}  # the stash is gone again


def test_a_shadow_created_as_v1_is_stored_as_v2(crds: InstalledCrds, namespace: str) -> None:
    spec = {"state": "PerformedUpdate", "state_transition_timestamp": None, "version": "1.20.0"}
    body = shadow_object("brs-c", spec, version="v1", labels={"made": "v1"})
    crds.objects.create_namespaced_custom_object(GROUP, "v1", namespace, SHADOWS, body)
    status = {"current_version": "1.19.2", "target_version": "1.20.0", "current_state": "Idle"}
    crds.objects.patch_namespaced_custom_object_status(
        GROUP, "v1", namespace, SHADOWS, "brs-c", {"status": status}
    )

    v2 = read(crds, namespace, "brs-c", "v2")
    v1 = read(crds, namespace, "brs-c", "v1")

    assert v2["spec"]["state"] == "StagedAndPerformedUpdate"
    assert v2["status"] == {**status, "crash_count": 0}
    assert v2["metadata"]["labels"] == {"made": "v1"}
    assert v1["spec"]["state"] == "PerformedUpdate"  # the stash remembers which v1 state it was


def test_a_v1_list_of_many_shadows_converts_one_object_per_review(
    crds: InstalledCrds, namespace: str
) -> None:
    start = len(crds.worker.reviews)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: create_v2(crds, namespace, f"brs-{i:05d}"), range(MANY_SHADOWS)))

    # The list's own time-out bounds it; how long it takes is a benchmark's figure, not a test's.
    listed = crds.objects.list_namespaced_custom_object(
        GROUP, "v1", namespace, SHADOWS, _request_timeout=120
    )

    items = listed["items"]
    assert len(items) == MANY_SHADOWS
    assert {item["apiVersion"] for item in items} == {f"{GROUP}/v1"}
    assert {item["spec"]["state"] for item in items} == {"StagedUpdate"}
    reviews = crds.worker.reviews_since(start)
    # kube-apiserver decodes every stored object on its own: one review per object and write,
    # never one for the whole list (the list comes from its v1 watch cache).
    assert len(reviews) >= 2 * MANY_SHADOWS
    assert max(review.objects for review in reviews) == 1
    assert max(review.body_bytes for review in reviews) < 4096
