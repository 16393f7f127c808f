"""The lists of versions a resync reads ask kube-apiserver for metadata only (a
PartialObjectMetadataList), paged and with their selector like any list, and the emulator answers
them as kube-apiserver does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from brupop.adapters.kubernetes.api import watching
from brupop.adapters.kubernetes.api.watching import PARTIAL_METADATA_LIST
from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.ports.errors import ForbiddenError
from tests.contract.kubernetes.conftest import SHADOWS_PATH, Sent, sent, status
from tests.support.kube_api_rules import SHADOWS
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer

OPTED_IN = {"bottlerocket.aws/updater-interface-version": "2.0.0"}
JSON = "application/json"
SELECTOR = "bottlerocket.aws/updater-interface-version=2.0.0"


def test_shadow_versions_are_read_as_metadata_only_page_after_page(
    kube: KubernetesCluster, emulator: KubeEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watching, "LIST_PAGE_SIZE", 2)
    for index in range(5):
        kube.shadows.create(f"node-{index}", f"uid-{index}")
    before = len(sent(emulator))

    versions = kube.shadows.list_versions()

    pages = sent(emulator)[before:]
    assert [(page.path, page.query.get("limit"), page.accept) for page in pages] == [
        (SHADOWS_PATH, "2", PARTIAL_METADATA_LIST)
    ] * 3
    assert "continue" not in pages[0].query and all("continue" in p.query for p in pages[1:])
    listed = kube.shadows.list()
    assert versions.versions == {s.name: s.resource_version for s in listed.items}
    assert len(versions.versions) == 5
    assert versions.resource_version == listed.resource_version


def test_node_versions_are_read_as_metadata_only_with_the_label_selector(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    emulator.add_node("node-a", labels=OPTED_IN)
    emulator.add_node("node-b")
    before = len(sent(emulator))

    versions = kube.nodes.list_versions(OPTED_IN)

    (request,) = sent(emulator)[before:]
    assert request == Sent(
        "GET", "/api/v1/nodes", {"labelSelector": SELECTOR, "limit": "500"}, JSON, None
    )
    assert request.accept == PARTIAL_METADATA_LIST
    assert versions.versions == {"node-a": kube.nodes.get("node-a").resource_version}


def test_a_refused_version_list_is_the_ports_error(
    kube: KubernetesCluster, emulator: KubeEmulator
) -> None:
    refusal = 'nodes is forbidden: User "x" cannot list resource "nodes" in API group ""'
    emulator["get /api/v1/nodes"] << 403 << status(403, "Forbidden", refusal)

    with pytest.raises(ForbiddenError):
        kube.nodes.list_versions(OPTED_IN)


def _list(server: EmulatorServer, path: str, accept: str) -> tuple[int, Any]:
    try:
        answer = server.api_client().call_api(
            path,
            "GET",
            header_params={"Accept": accept},
            auth_settings=["BearerToken"],
            _preload_content=False,
        )
        return answer.status, json.loads(answer.data)
    except client.ApiException as error:
        return error.status, json.loads(error.body)


def test_the_emulator_answers_a_metadata_only_list_with_every_items_whole_metadata(
    server: EmulatorServer, emulator: KubeEmulator
) -> None:
    stored = emulator.put_object(
        SHADOWS,
        {
            "metadata": {"name": "brs-a", "namespace": "brupop-bottlerocket-aws"},
            "spec": {"state": "Idle"},
        },
    )

    code, answer = _list(server, SHADOWS_PATH, PARTIAL_METADATA_LIST)

    assert code == 200
    assert (answer["apiVersion"], answer["kind"]) == ("meta.k8s.io/v1", "PartialObjectMetadataList")
    assert answer["items"] == [
        {
            "apiVersion": "meta.k8s.io/v1",
            "kind": "PartialObjectMetadata",
            "metadata": stored["metadata"],
        }
    ]
    assert answer["metadata"]["resourceVersion"]


def test_the_emulator_serves_whole_objects_to_the_first_media_range_it_can(
    server: EmulatorServer, emulator: KubeEmulator
) -> None:
    emulator.add_node("node-a")

    code, answer = _list(server, "/api/v1/nodes", "application/json;as=Table;v=v1, */*")

    assert (code, answer["kind"]) == (200, "NodeList")
    assert "status" in answer["items"][0]


def test_the_emulator_refuses_with_406_a_list_in_a_form_it_cannot_serve(
    server: EmulatorServer,
) -> None:
    accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

    code, answer = _list(server, "/api/v1/nodes", accept)

    assert (code, answer["reason"]) == (406, "NotAcceptable")
