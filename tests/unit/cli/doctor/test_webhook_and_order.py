"""doctor calls the conversion webhook for real, and tells one cause once: a check whose
prerequisite failed is a SKIP naming it, not a second FAIL."""

from __future__ import annotations

from datetime import UTC, datetime

from brupop.cli.crd.definition import custom_resource_definition
from brupop.cli.doctor.crds import CRD_PATH
from brupop.cli.doctor.main import run_checks
from brupop.cli.doctor.result import DoctorFinding, passed
from brupop.cli.doctor.webhook import check_conversion_webhook
from brupop.domain.conversion import convert_review
from tests.unit.cli.doctor.fake_cluster import FakeCluster, listing

NS = "brupop-bottlerocket-aws"
SHADOW_CRD = CRD_PATH + "bottlerocketshadows.brupop.bottlerocket.aws"
CRD = custom_resource_definition(NS)
PORT = CRD["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"]
PROXY = f"/api/v1/namespaces/{NS}/services/https:brupop-apiserver:{PORT}/proxy/crdconvert"
SHADOWS = "/apis/brupop.bottlerocket.aws/{}/namespaces/" + NS + "/bottlerocketshadows"


def _webhook_cluster(*, webhook_up: bool, stored: bool = True) -> FakeCluster:
    """The chart's shadow CRD; its webhook converts through the proxy when up, and a stored
    shadow read as v1 is a 500 from kube-apiserver when it is down."""
    items = [{"metadata": {"name": "brs-node-a"}}] if stored else []
    cluster = FakeCluster(
        {
            SHADOW_CRD: CRD,
            SHADOWS.format("v2"): listing(*items),
            SHADOWS.format("v1"): listing(*items),  # the watch cache's list: it always answers
            SHADOWS.format("v1") + "/brs-node-a": {} if webhook_up else 500,
            PROXY: 503,
        }
    )
    if webhook_up:
        cluster.posted[PROXY] = convert_review
    return cluster


def test_the_webhook_passes_when_it_converts_a_review_and_a_stored_shadow_reads_as_v1() -> None:
    cluster = _webhook_cluster(webhook_up=True)

    result = check_conversion_webhook(cluster, NS)

    assert result.ok, result
    assert result.detail == (
        f"converted a sample shadow sent through Service {NS}/brupop-apiserver:{PORT}/crdconvert; "
        "brs-node-a read as v1"
    )
    [(_, review)] = cluster.posts
    assert review["request"]["desiredAPIVersion"] == "brupop.bottlerocket.aws/v1"


def test_the_webhook_fails_while_it_is_down_although_the_v1_list_answers() -> None:
    result = check_conversion_webhook(_webhook_cluster(webhook_up=False), NS)

    assert not result.ok
    assert result.detail == (
        f"a ConversionReview sent through Service {NS}/brupop-apiserver:{PORT}/crdconvert failed "
        "(503: refused)"
    )
    assert "get pods,endpoints,certificate" in result.advice


def test_the_webhook_fails_naming_the_stored_shadow_kube_apiserver_cannot_convert() -> None:
    cluster = _webhook_cluster(webhook_up=False)
    cluster.posted[PROXY] = convert_review  # the Service answers, kube-apiserver's call fails

    result = check_conversion_webhook(cluster, NS)

    assert not result.ok
    assert result.detail == "reading brs-node-a as v1 failed (500: refused)"


def test_a_webhook_answer_without_a_converted_shadow_fails() -> None:
    cluster = _webhook_cluster(webhook_up=True)
    cluster.posted[PROXY] = lambda _: {
        "response": {"uid": "other", "result": {"status": "Success"}}
    }

    result = check_conversion_webhook(cluster, NS)

    assert not result.ok
    assert "answered a ConversionReview without a v1 shadow" in result.detail


def test_with_no_shadow_stored_the_review_alone_decides() -> None:
    result = check_conversion_webhook(_webhook_cluster(webhook_up=True, stored=False), NS)

    assert result.ok
    assert result.detail.endswith("; no shadow stored yet to read as v1")


def _lines(cluster: FakeCluster) -> list[str]:
    def metrics() -> DoctorFinding:
        return passed("metrics", "scraped")

    checks = run_checks(cluster, NS, metrics, lambda: datetime.now(UTC))
    return [result.line() for result in checks]


def test_a_cluster_with_nothing_installed_fails_the_namespace_and_crds_and_skips_the_rest() -> None:
    lines = _lines(FakeCluster({"/version": {"gitVersion": "v1.37.0"}}))

    assert [line.split(":")[0] for line in lines if line.startswith("FAIL")] == [
        "FAIL namespace",
        "FAIL crd bottlerocketshadows.brupop.bottlerocket.aws",
        "FAIL crd bottlerocketupdatepolicies.brupop.bottlerocket.aws",
    ]
    skips = [line for line in lines if line.startswith("SKIP")]
    assert len(skips) == 11, lines
    assert "SKIP rbac: needs namespace, which failed" in skips
    assert "SKIP metrics: needs namespace, which failed" in skips  # through the controller's
    assert all(" - do: " not in line for line in skips)


def test_a_missing_apiserver_deployment_skips_the_webhook_naming_it() -> None:
    cluster = _webhook_cluster(webhook_up=False)
    cluster.answers.update({"/version": {"gitVersion": "v1.37.0"}, f"/api/v1/namespaces/{NS}": {}})

    by_name = {line.split(":")[0]: line for line in _lines(cluster)}

    assert by_name["FAIL deployment brupop-apiserver"].startswith(
        "FAIL deployment brupop-apiserver: not found"
    )
    assert (
        by_name["SKIP conversion webhook"]
        == "SKIP conversion webhook: needs deployment brupop-apiserver, which failed"
    )
    assert cluster.posts == []  # the webhook was not called


def test_a_shadow_crd_without_its_webhook_fails_once_and_still_lets_the_agents_be_checked() -> None:
    crd = custom_resource_definition(NS)
    crd["spec"]["conversion"] = {"strategy": "None"}
    cluster = _webhook_cluster(webhook_up=True)
    cluster.answers.update(
        {
            "/version": {"gitVersion": "v1.37.0"},
            f"/api/v1/namespaces/{NS}": {},
            f"/apis/apps/v1/namespaces/{NS}/deployments/brupop-apiserver": {
                "spec": {"replicas": 1},
                "status": {"availableReplicas": 1},
            },
            SHADOW_CRD: crd,
        }
    )

    by_name = {line.split(":")[0]: line for line in _lines(cluster)}

    assert by_name["FAIL crd bottlerocketshadows.brupop.bottlerocket.aws"].startswith(
        "FAIL crd bottlerocketshadows.brupop.bottlerocket.aws: conversion strategy None"
    )
    assert by_name["SKIP conversion webhook"] == (
        "SKIP conversion webhook: needs crd bottlerocketshadows.brupop.bottlerocket.aws to "
        "convert by Webhook (its strategy is None)"
    )
    assert "FAIL agents" in by_name  # run, not skipped: the CRD is there (no node opted in)
