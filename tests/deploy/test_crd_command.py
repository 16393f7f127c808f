"""`brupop crd`: the committed CRDs are its output, and the shadow's carries what the cluster
relies on (the update policy's CRD has its own tests, in test_policy_crd)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from brupop.cli.crd.main import render
from brupop.cli.crd.schema import CrdSchemaError, structural_schema
from brupop.cli.main import main as brupop
from brupop.domain.shadow import KIND, ShadowSpec, ShadowStatus
from brupop.domain.states import UpdateState
from brupop.domain.versions import SEMVER_PATTERN
from tests.deploy.rendering import CRD_COPY, POLICY_CRD_COPY, committed_manifest, load_yaml


@functools.cache
def _default_crd() -> dict[str, Any]:
    loaded: dict[str, Any] = load_yaml(render(kinds=(KIND,)))
    return loaded


def _crd(text: str | None = None) -> dict[str, Any]:
    if text is None:
        return _default_crd()
    loaded: dict[str, Any] = load_yaml(text)
    return loaded


def _version(name: str) -> dict[str, Any]:
    versions: list[dict[str, Any]] = _crd()["spec"]["versions"]
    (version,) = [v for v in versions if v["name"] == name]
    return version


def _schema(version: str) -> dict[str, Any]:
    schema: dict[str, Any] = _version(version)["schema"]["openAPIV3Schema"]
    return schema


def test_committed_crds_are_what_brupop_crd_prints_from_the_models(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert brupop(["crd"]) == 0
    printed = capsys.readouterr().out
    committed = CRD_COPY.read_text(encoding="utf-8") + POLICY_CRD_COPY.read_text(encoding="utf-8")
    assert printed == committed, "run deploy/render"


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("BottlerocketShadow", "bottlerocketshadows.brupop.bottlerocket.aws"),
        ("BottlerocketUpdatePolicy", "bottlerocketupdatepolicies.brupop.bottlerocket.aws"),
    ],
)
def test_the_kind_option_prints_that_kinds_crd_alone(
    kind: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert brupop(["crd", "--kind", kind]) == 0
    crd = _crd(capsys.readouterr().out)
    assert (crd["metadata"]["name"], crd["spec"]["names"]["kind"]) == (name, kind)


def test_an_unknown_kind_is_refused_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        brupop(["crd", "--kind", "BottlerocketPolicy"])
    assert stopped.value.code == 2
    assert "argument --kind: invalid choice" in capsys.readouterr().err


def test_namespace_and_port_options_move_the_webhook_and_the_ca_injection(
    capsys: pytest.CaptureFixture[str],
) -> None:
    options = ["--namespace", "ops", "--apiserver-service-port", "8443", "--kind", KIND]
    assert brupop(["crd", *options]) == 0
    crd = _crd(capsys.readouterr().out)
    service = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
    assert service == {
        "name": "brupop-apiserver",
        "namespace": "ops",
        "path": "/crdconvert",
        "port": 8443,
    }
    annotation = crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
    assert annotation == "ops/brupop-apiserver-certificate"


@pytest.mark.parametrize("port", ["0", "70000", "https"])
def test_a_port_that_is_not_a_tcp_port_is_refused_with_exit_2(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        brupop(["crd", "--apiserver-service-port", port])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --apiserver-service-port: {port!r} is not a TCP port" in err
    assert "_port" not in err


@pytest.mark.parametrize("namespace", ["bad ns!", "Ops", "-ops", "ops-", "a" * 64, ""])
def test_a_namespace_that_is_not_a_dns_label_is_refused_with_exit_2(
    namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        brupop(["crd", f"--namespace={namespace}"])

    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --namespace:" in err and "DNS-1123 label" in err
    assert "apiVersion" not in err


def test_v2_is_stored_and_v1_only_served_both_with_the_status_subresource() -> None:
    versions = {v["name"]: v for v in _crd()["spec"]["versions"]}
    assert list(versions) == ["v2", "v1"]
    assert (versions["v2"]["served"], versions["v2"]["storage"]) == (True, True)
    assert (versions["v1"]["served"], versions["v1"]["storage"]) == (True, False)
    assert all(v["subresources"] == {"status": {}} for v in versions.values())


def test_names_match_the_original_resource() -> None:
    crd = _crd()
    assert crd["metadata"]["name"] == "bottlerocketshadows.brupop.bottlerocket.aws"
    assert crd["spec"]["group"] == "brupop.bottlerocket.aws"
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"] == {
        "kind": "BottlerocketShadow",
        "plural": "bottlerocketshadows",
        "singular": "bottlerocketshadow",
        "shortNames": ["brs"],
    }


def test_printer_columns_keep_the_originals_and_v2_adds_an_integer_crash_count() -> None:
    def columns(version: str) -> list[tuple[str, str, str]]:
        return [
            (c["name"], c["jsonPath"], c["type"])
            for c in _version(version)["additionalPrinterColumns"]
        ]

    original = [
        ("State", ".status.current_state", "string"),
        ("Version", ".status.current_version", "string"),
        ("Target State", ".spec.state", "string"),
        ("Target Version", ".spec.version", "string"),
    ]
    assert columns("v1") == original
    assert columns("v2") == [*original, ("Crash Count", ".status.crash_count", "integer")]


def test_conversion_goes_to_the_apiservers_webhook_port_with_conversion_review_v1() -> None:
    conversion = _crd()["spec"]["conversion"]
    assert conversion["strategy"] == "Webhook"
    assert conversion["webhook"]["conversionReviewVersions"] == ["v1"]
    assert conversion["webhook"]["clientConfig"]["service"] == {
        "name": "brupop-apiserver",
        "namespace": "brupop-bottlerocket-aws",
        "path": "/crdconvert",
        "port": 8444,
    }


def test_ca_injection_names_a_certificate_the_manifest_creates() -> None:
    annotation = _crd()["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
    namespace, name = annotation.split("/")
    certificate = committed_manifest().get("Certificate", name)
    assert certificate["metadata"]["namespace"] == namespace


def test_v2_schema_follows_the_models_fields_states_and_version_pattern() -> None:
    properties = _schema("v2")["properties"]
    assert list(properties["spec"]["properties"]) == list(ShadowSpec.model_fields)
    assert list(properties["status"]["properties"]) == list(ShadowStatus.model_fields)
    assert properties["spec"]["properties"]["state"]["enum"] == [s.value for s in UpdateState]
    versions = [
        properties["spec"]["properties"]["version"],
        properties["status"]["properties"]["current_version"],
        properties["status"]["properties"]["target_version"],
    ]
    assert all(v["pattern"] == SEMVER_PATTERN for v in versions)


def test_fields_that_cannot_be_null_are_required_as_in_the_original() -> None:
    v2 = _schema("v2")
    assert v2["required"] == ["spec"]
    assert v2["properties"]["spec"]["required"] == ["state"]
    assert v2["properties"]["status"]["required"] == [
        "current_version",
        "target_version",
        "current_state",
        "crash_count",
    ]
    assert v2["properties"]["status"]["nullable"] is True
    assert _schema("v1")["properties"]["status"]["required"] == [
        "current_version",
        "target_version",
        "current_state",
    ]


def test_crash_count_is_a_non_negative_32_bit_integer() -> None:
    crash_count = _schema("v2")["properties"]["status"]["properties"]["crash_count"]
    assert crash_count == {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}


def test_v1_schema_has_the_v1_states_and_no_crash_count() -> None:
    v1 = _schema("v1")["properties"]
    assert v1["spec"]["properties"]["state"]["enum"] == [
        "Idle",
        "StagedUpdate",
        "PerformedUpdate",
        "RebootedIntoUpdate",
        "MonitoringUpdate",
    ]
    assert "crash_count" not in v1["status"]["properties"]


def test_the_schema_carries_no_defaults_titles_or_references() -> None:
    text = render()
    for keyword in ("default:", "title:", "$ref", "anyOf"):
        assert keyword not in text


class _Ambiguous(BaseModel):
    value: int | str


class _FreeForm(BaseModel):
    value: dict[str, int]


class _TypedAlternatives(BaseModel):
    model_config = ConfigDict(json_schema_extra={"oneOf": [{"type": "object"}, {"required": []}]})
    value: int = 0


class _Untyped(BaseModel):
    value: object


@pytest.mark.parametrize("model", [_Ambiguous, _Untyped, _FreeForm, _TypedAlternatives])
def test_a_model_without_a_structural_form_is_refused(model: type[BaseModel]) -> None:
    with pytest.raises(CrdSchemaError):
        structural_schema(model)


def test_the_crds_spell_out_every_value_with_no_yaml_anchors() -> None:
    text = render()

    assert "&id" not in text and "*id" not in text, "a value used twice is written as an alias"
