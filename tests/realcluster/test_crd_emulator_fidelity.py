"""The API emulator answers brupop's custom resources as a real kube-apiserver does: the same
requests go to both, and the answers (status codes, pruned bodies) must agree."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client

from brupop.adapters.kubernetes.api.watching import PARTIAL_METADATA_LIST
from tests.realcluster.conftest import ControlPlane
from tests.realcluster.crd_webhook import GROUP, JSON, InstalledCrds, installed_crds
from tests.support.kube_api_rules import SHADOWS as SHADOWS_KIND
from tests.support.kube_emulator import KubeEmulator
from tests.support.kube_emulator_server import EmulatorServer

NS = "brupop-bottlerocket-aws"
POLICY_PATH = f"/apis/{GROUP}/v1/namespaces/{NS}/bottlerocketupdatepolicies"
SHADOW_PATH = f"/apis/{GROUP}/v2/namespaces/{NS}/bottlerocketshadows"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any


class Server:
    """Raw calls to one API server, answered with the status and the JSON body."""

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api

    def call(
        self,
        method: str,
        path: str,
        body: object = None,
        content_type: str = "",
        accept: str = "application/json",
    ) -> Answer:
        headers = {"Accept": accept, "Content-Type": content_type or "application/json"}
        try:
            response = self.api.call_api(
                path,
                method,
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
                _preload_content=False,
            )
            return Answer(response.status, json.loads(response.data))
        except client.ApiException as error:
            return Answer(error.status, json.loads(error.body))


@pytest.fixture(scope="module")
def crds(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InstalledCrds]:
    try:
        control_plane.core.create_namespace(client.V1Namespace(metadata={"name": NS}))
    except client.ApiException as error:
        assert error.status == 409
    yield from installed_crds(control_plane.api, tmp_path_factory.mktemp("webhook-tls"))


@pytest.fixture
def servers(control_plane: ControlPlane, crds: InstalledCrds) -> Iterator[dict[str, Server]]:
    with EmulatorServer(KubeEmulator()) as emulated:
        yield {"real": Server(control_plane.api), "emulator": Server(emulated.api_client())}


def both(
    servers: dict[str, Server], method: str, path: str, body: object = None, **kw: Any
) -> dict[str, Answer]:
    return {name: server.call(method, path, body, **kw) for name, server in servers.items()}


def policy(name: str, spec: JSON) -> JSON:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": name},
        "spec": spec,
    }


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


@pytest.mark.parametrize(
    "spec",
    [
        {"canary": {"count": 0}},
        {"canary": {"count": "3"}},
        {"canary": {"selector": "a=b", "count": 3}},
        {"paused": "yes"},
        {"drain": {"onTimeout": "explode"}},
    ],
)
def test_both_refuse_a_policy_the_schema_refuses_with_422(
    servers: dict[str, Server], spec: JSON
) -> None:
    answers = both(servers, "POST", POLICY_PATH, policy(unique("bad"), spec))
    assert {name: answer.status for name, answer in answers.items()} == {
        "real": 422,
        "emulator": 422,
    }


@pytest.mark.parametrize(
    "spec",
    [
        {"paused": True, "pause": True},
        {"canary": {"selector": None, "count": 3, "size": 1}},
        {"healthGate": {"timeoutSeconds": 60, "extra": {"a": 1}}},
    ],
)
def test_both_prune_unknown_fields_and_null_choices_alike(
    servers: dict[str, Server], spec: JSON
) -> None:
    answers = both(servers, "POST", POLICY_PATH, policy(unique("pruned"), spec))
    assert answers["real"].status == answers["emulator"].status == 201
    assert answers["real"].body["spec"] == answers["emulator"].body["spec"]


def test_both_refuse_a_strategic_merge_patch_on_a_custom_resource_with_415(
    servers: dict[str, Server],
) -> None:
    name = unique("smp")
    both(servers, "POST", POLICY_PATH, policy(name, {"paused": False}))
    answers = both(
        servers,
        "PATCH",
        f"{POLICY_PATH}/{name}",
        {"spec": {"paused": True}},
        content_type=STRATEGIC,
    )
    assert {name: answer.status for name, answer in answers.items()} == {
        "real": 415,
        "emulator": 415,
    }


def test_both_refuse_a_status_the_schema_refuses_with_422(
    servers: dict[str, Server],
) -> None:
    name = unique("status")
    both(servers, "POST", POLICY_PATH, policy(name, {"paused": False}))
    bad = both(
        servers,
        "PATCH",
        f"{POLICY_PATH}/{name}/status",
        {"status": {"phase": 7}},
        content_type=MERGE,
    )
    assert {n: a.status for n, a in bad.items()} == {"real": 422, "emulator": 422}


def test_both_answer_a_metadata_only_list_with_each_items_whole_metadata_alone(
    servers: dict[str, Server],
) -> None:
    """What a resync's list of versions asks for (`list_versions`), of a custom resource and
    of a built-in kind: a PartialObjectMetadataList, paged as any list."""
    names = [unique("meta"), unique("meta")]
    for name in names:
        both(servers, "POST", POLICY_PATH, policy(name, {"paused": False}))
    for path in (f"{POLICY_PATH}?limit=1", "/api/v1/nodes?limit=1"):
        answers = both(servers, "GET", path, accept=PARTIAL_METADATA_LIST)
        for server, answer in answers.items():
            assert answer.status == 200, (server, path, answer.body)
            head = (answer.body["apiVersion"], answer.body["kind"])
            assert head == ("meta.k8s.io/v1", "PartialObjectMetadataList"), (server, path)
            for item in answer.body["items"]:
                assert set(item) == {"apiVersion", "kind", "metadata"}, (server, path)
                assert (item["apiVersion"], item["kind"]) == (
                    "meta.k8s.io/v1",
                    "PartialObjectMetadata",
                )
                assert item["metadata"]["name"] and item["metadata"]["resourceVersion"]
    policies = both(servers, "GET", f"{POLICY_PATH}?limit=1", accept=PARTIAL_METADATA_LIST)
    assert all("continue" in answer.body["metadata"] for answer in policies.values())


def test_both_refuse_a_garbled_continue_token_with_400(servers: dict[str, Server]) -> None:
    answers = both(servers, "GET", f"{SHADOW_PATH}?limit=1&continue=garbage")
    assert {name: answer.status for name, answer in answers.items()} == {
        "real": 400,
        "emulator": 400,
    }


def test_the_emulator_expires_a_continue_token_once_etcd_compacts_as_the_real_server_does() -> None:
    """Not provoked on the real server here (its etcd compacts every 5 minutes): the emulator
    answers what kube-apiserver answers then, 410 Expired."""
    emulator = KubeEmulator()
    for index in range(3):
        emulator.put_object(
            SHADOWS_KIND,
            {"metadata": {"name": f"brs-{index}", "namespace": NS}, "spec": {"state": "Idle"}},
        )
    with EmulatorServer(emulator) as emulated:
        server = Server(emulated.api_client())
        first = server.call("GET", f"{SHADOW_PATH}?limit=1")
        token = first.body["metadata"]["continue"]
        assert server.call("GET", f"{SHADOW_PATH}?limit=1&continue={token}").status == 200
        later = {"metadata": {"name": "brs-later", "namespace": NS}, "spec": {"state": "Idle"}}
        emulator.put_object(SHADOWS_KIND, later)
        emulator.compact()  # past the token's snapshot
        expired = server.call("GET", f"{SHADOW_PATH}?limit=1&continue={token}")
    assert (expired.status, expired.body["reason"]) == (410, "Expired")
