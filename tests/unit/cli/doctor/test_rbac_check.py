from __future__ import annotations

from pathlib import Path

import yaml

from brupop.cli.doctor.grants import CLUSTER, GRANTS, OWN_NAMESPACE, Grant
from brupop.cli.doctor.rbac import check_rbac
from brupop.cli.doctor.reading import JSON
from tests.unit.cli.doctor.fake_cluster import Answer, FakeCluster, listing

MANIFEST = Path(__file__).resolve().parents[4] / "deploy" / "bottlerocket-update-operator.yaml"
NS = "brupop-bottlerocket-aws"
RBAC = "/apis/rbac.authorization.k8s.io/v1"


def _manifest_grants() -> set[tuple[str, str, str, str, str]]:
    """(account, namespace, group, resource, verb) for every verb the manifest binds."""
    docs = [doc for doc in yaml.safe_load_all(MANIFEST.read_text()) if doc]
    roles = {
        (doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"]): doc["rules"]
        for doc in docs
        if doc["kind"] in ("Role", "ClusterRole")
    }
    found = set()
    for binding in (doc for doc in docs if doc["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        where = binding["metadata"].get("namespace")
        ref = binding["roleRef"]
        rules = roles[(ref["kind"], where if ref["kind"] == "Role" else None, ref["name"])]
        for subject in binding["subjects"]:
            namespace = CLUSTER if where is None else (OWN_NAMESPACE if where == NS else where)
            for rule in rules:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        for verb in rule["verbs"]:
                            found.add((subject["name"], namespace, group, resource, verb))
    return found


def test_the_rights_doctor_asks_for_are_the_rights_the_chart_grants() -> None:
    asked = {
        (g.account, g.namespace, g.group, g.resource, verb) for g in GRANTS for verb in g.verbs
    }
    assert asked == _manifest_grants()


def test_rbac_passes_when_every_review_allows_and_asks_as_the_service_account() -> None:
    cluster = FakeCluster()
    found = check_rbac(cluster, NS)
    assert found.ok
    assert "by SubjectAccessReview" in found.detail
    spec = cluster.reviews[0]["spec"]
    assert spec["user"].startswith(f"system:serviceaccount:{NS}:")
    eviction = next(
        r["spec"]["resourceAttributes"]
        for r in cluster.reviews
        if r["spec"]["resourceAttributes"]["resource"] == "pods"
        and r["spec"]["resourceAttributes"]["verb"] == "create"
    )
    assert eviction["subresource"] == "eviction"


def test_rbac_names_a_right_a_review_denies() -> None:
    def allowed(review: dict[str, object]) -> bool:
        return "leases" not in str(review)

    found = check_rbac(FakeCluster(review=allowed), NS)
    assert not found.ok
    assert "brupop-controller-service-account cannot create leases in " + NS in found.detail


def _roles_cluster(grants: tuple[Grant, ...]) -> FakeCluster:
    """The chart's bindings, one role per grant, as the API would list them."""
    answers: dict[str, Answer] = {}
    cluster_bindings: list[JSON] = []
    namespaced: dict[str, list[JSON]] = {}
    for index, grant in enumerate(grants):
        rule = {"apiGroups": [grant.group], "resources": [grant.resource], "verbs": grant.verbs}
        subject = {"kind": "ServiceAccount", "name": grant.account, "namespace": NS}
        name = f"role-{index}"
        if grant.namespace == CLUSTER:
            answers[f"{RBAC}/clusterroles/{name}"] = {"rules": [rule]}
            cluster_bindings.append(
                {"subjects": [subject], "roleRef": {"kind": "ClusterRole", "name": name}}
            )
        else:
            where = NS if grant.namespace == OWN_NAMESPACE else grant.namespace
            answers[f"{RBAC}/namespaces/{where}/roles/{name}"] = {"rules": [rule]}
            namespaced.setdefault(where, []).append(
                {"subjects": [subject], "roleRef": {"kind": "Role", "name": name}}
            )
    answers[f"{RBAC}/clusterrolebindings"] = listing(*cluster_bindings)
    for where, bindings in namespaced.items():
        answers[f"{RBAC}/namespaces/{where}/rolebindings"] = listing(*bindings)
    return FakeCluster(answers, review=403)


def test_refused_reviews_fall_back_to_reading_the_roles_and_bindings() -> None:
    found = check_rbac(_roles_cluster(GRANTS), NS)
    assert found.ok, found.detail
    assert "by reading the roles and bindings" in found.detail


def test_the_roles_fallback_names_a_role_that_is_missing() -> None:
    without_leases = tuple(g for g in GRANTS if g.resource != "leases")
    found = check_rbac(_roles_cluster(without_leases), NS)
    assert not found.ok
    assert "3 of" in found.detail
    assert "cannot get leases" in found.detail
