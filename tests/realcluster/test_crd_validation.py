"""What a real kube-apiserver does with brupop's CRD schemas: it refuses a bad policy or shadow
with 422, prunes unknown fields, and accepts every example policy the docs show."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from brupop.domain.policy.policy_object import policy_from_object
from tests.realcluster.conftest import ControlPlane
from tests.realcluster.crd_webhook import (
    GROUP,
    JSON,
    POLICIES,
    SHADOWS,
    InstalledCrds,
    installed_crds,
    shadow_object,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
YAML_BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def crds(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[InstalledCrds]:
    yield from installed_crds(control_plane.api, tmp_path_factory.mktemp("webhook-tls"))


def policy(spec: JSON) -> JSON:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": "default"},
        "spec": spec,
    }


def create_policy(crds: InstalledCrds, namespace: str, spec: JSON) -> JSON:
    created: JSON = crds.objects.create_namespaced_custom_object(
        GROUP, "v1", namespace, POLICIES, policy(spec)
    )
    return created


def refusal(crds: InstalledCrds, namespace: str, spec: JSON) -> tuple[int, str]:
    with pytest.raises(ApiException) as raised:
        create_policy(crds, namespace, spec)
    return raised.value.status, str(json.loads(raised.value.body)["message"])


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"canary": {"count": 0}}, "spec.canary.count"),
        ({"haltAfterFailures": 1001}, "spec.haltAfterFailures"),
        ({"healthGate": {"timeoutSeconds": -1}}, "spec.healthGate.timeoutSeconds"),
        ({"drain": {"onTimeout": "explode"}}, "spec.drain.onTimeout"),
    ],
)
def test_the_server_refuses_an_out_of_range_policy_value_with_422(
    crds: InstalledCrds, namespace: str, spec: JSON, field: str
) -> None:
    status, message = refusal(crds, namespace, spec)
    assert status == 422
    assert field in message


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"paused": "yes"}, "spec.paused"),
        ({"canary": {"count": "3"}}, "spec.canary.count"),
        ({"healthGate": {"httpProbes": {"url": "http://a/"}}}, "spec.healthGate.httpProbes"),
    ],
)
def test_the_server_refuses_a_wrongly_typed_policy_value_with_422(
    crds: InstalledCrds, namespace: str, spec: JSON, field: str
) -> None:
    status, message = refusal(crds, namespace, spec)
    assert status == 422
    assert field in message and "must be of type" in message


def test_the_server_prunes_unknown_policy_fields(crds: InstalledCrds, namespace: str) -> None:
    created = create_policy(
        crds, namespace, {"paused": True, "pause": True, "canary": {"count": 2, "size": 9}}
    )
    assert created["spec"] == {"paused": True, "canary": {"count": 2}}


def test_a_canary_with_a_null_selector_and_a_count_is_accepted_as_a_count(
    crds: InstalledCrds, namespace: str
) -> None:
    created = create_policy(crds, namespace, {"canary": {"selector": None, "count": 3}})
    assert created["spec"] == {"canary": {"count": 3}}
    assert policy_from_object(created).problem is None


@pytest.mark.parametrize(
    "canary", [{"selector": "a=b", "count": 3}, {"soakSeconds": 60}, {"selector": None}]
)
def test_a_canary_needs_exactly_one_of_selector_and_count(
    crds: InstalledCrds, namespace: str, canary: JSON
) -> None:
    status, message = refusal(crds, namespace, {"canary": canary})
    assert status == 422
    assert "oneOf" in message


def doc_policies() -> list[tuple[str, JSON]]:
    """Every policy (or policy `spec:` fragment) in a yaml block of policy.md and safety.md."""
    found = []
    for page in ("policy.md", "safety.md"):
        for number, block in enumerate(YAML_BLOCK.findall((DOCS / page).read_text()), 1):
            document: Any = yaml.safe_load(block)
            if not isinstance(document, dict) or "spec" not in document:
                continue
            if document.get("kind", "BottlerocketUpdatePolicy") == "BottlerocketUpdatePolicy":
                found.append((f"{page} block {number}", document["spec"] or {}))
    return found


def test_the_docs_show_example_policies() -> None:
    assert len(doc_policies()) >= 10


@pytest.mark.parametrize(("where", "spec"), doc_policies(), ids=[w for w, _ in doc_policies()])
def test_every_example_policy_in_the_docs_is_accepted_whole(
    crds: InstalledCrds, namespace: str, where: str, spec: JSON
) -> None:
    created = create_policy(crds, namespace, spec)
    assert created["spec"] == spec, f"{where}: the server pruned or changed it"
    assert policy_from_object(created).problem is None, where


def test_the_server_refuses_a_shadow_in_an_unknown_state_with_422(
    crds: InstalledCrds, namespace: str
) -> None:
    body = shadow_object("brs-x", {"state": "Exploding"}, version="v2")
    with pytest.raises(ApiException) as raised:
        crds.objects.create_namespaced_custom_object(GROUP, "v2", namespace, SHADOWS, body)
    assert raised.value.status == 422
    assert "spec.state" in json.loads(raised.value.body)["message"]


def test_the_server_prunes_unknown_shadow_fields(crds: InstalledCrds, namespace: str) -> None:
    body = shadow_object("brs-y", {"state": "Idle", "colour": "red"}, version="v2")
    body["surplus"] = {"a": 1}
    created = crds.objects.create_namespaced_custom_object(GROUP, "v2", namespace, SHADOWS, body)
    assert created["spec"] == {"state": "Idle"}
    assert "surplus" not in created
