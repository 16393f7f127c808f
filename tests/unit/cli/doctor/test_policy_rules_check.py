"""doctor's `policy rules`: a rule of the `default` policy that does nothing over the opted-in
nodes fails, naming its field; a policy whose every rule acts passes, and so does no policy."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from brupop.cli.doctor.policy_rules import check_policy_rules
from brupop.domain.shadow import OPT_IN_LABEL
from tests.unit.cli.doctor.fake_cluster import FakeCluster, listing

NS = "brupop-bottlerocket-aws"
POLICY = f"/apis/brupop.bottlerocket.aws/v1/namespaces/{NS}/bottlerocketupdatepolicies/default"
NOW = datetime(2026, 12, 2, 4, 0, tzinfo=UTC)


def _node(name: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {OPT_IN_LABEL: "2.0.0", **labels},
        }
    }


def _cluster(spec: dict[str, Any]) -> FakeCluster:
    policy = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": "default"},
        "spec": spec,
    }
    nodes = listing(_node("node-a", zone="a"), _node("node-b", zone="b"))
    return FakeCluster({POLICY: policy, "/api/v1/nodes": nodes})


def test_a_canary_selector_no_opted_in_node_matches_fails_naming_the_field() -> None:
    cluster = _cluster({"canary": {"selector": "brupop.bottlerocket.aws/canary=true"}})

    result = check_policy_rules(cluster, NS, NOW)

    assert not result.ok
    assert result.detail == (
        "spec.canary.selector: 'brupop.bottlerocket.aws/canary=true' picks none of the 2 "
        "opted-in nodes: there are no canaries"
    )
    assert "brupop plan" in result.advice
    assert cluster.queries["/api/v1/nodes"] == {"labelSelector": OPT_IN_LABEL}


def test_a_policy_whose_rules_all_act_passes() -> None:
    cluster = _cluster(
        {"canary": {"selector": "zone=a"}, "budgets": [{"groupBy": "zone", "maxConcurrent": 1}]}
    )

    result = check_policy_rules(cluster, NS, NOW)

    assert result.ok
    assert result.detail == "every rule of `default` acts on the 2 opted-in nodes"


def test_no_policy_object_passes() -> None:
    assert check_policy_rules(FakeCluster(), NS, NOW).ok
