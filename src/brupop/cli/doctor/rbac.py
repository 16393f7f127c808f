"""The rights brupop's ServiceAccounts need, asked of the API by SubjectAccessReview (the one
write doctor makes: it changes nothing); when doctor may not create those, by reading the
bindings and roles of each account and matching their rules."""

from __future__ import annotations

from collections.abc import Callable

from brupop.cli.doctor.grants import GRANTS, Grant, in_namespace
from brupop.cli.doctor.reading import JSON, ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed

CHECK = "rbac"
SHOWN = 4
Allowed = Callable[[Grant, str], bool]


class _ReviewsRefused(Exception):
    """This user may not create SubjectAccessReviews."""


def check_rbac(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """Every verb of every grant allowed; the failure names what is missing."""
    try:
        missing = _missing(GRANTS, namespace, _by_review(reader, namespace))
        how = "by SubjectAccessReview"
    except _ReviewsRefused:
        try:
            missing = _missing(GRANTS, namespace, _by_roles(reader, namespace))
        except ReadRefused as error:
            return failed(
                CHECK,
                f"cannot create SubjectAccessReviews nor read roles and bindings ({error})",
                "run doctor as a user who may create subjectaccessreviews or read rbac objects",
            )
        how = "by reading the roles and bindings"
    except ReadRefused as error:
        return failed(CHECK, f"cannot ask the API ({error})", "kubectl cluster-info")
    total = sum(len(grant.verbs) for grant in GRANTS)
    if missing:
        shown = "; ".join(missing[:SHOWN]) + (
            f"; and {len(missing) - SHOWN} more" if len(missing) > SHOWN else ""
        )
        return failed(
            CHECK,
            f"{len(missing)} of {total} rights missing ({how}): {shown}",
            "install the chart's ClusterRoles, Roles and bindings (helm upgrade, or kubectl "
            "apply the manifest)",
        )
    return passed(CHECK, f"all {total} rights the chart grants are in force ({how})")


def _missing(grants: tuple[Grant, ...], namespace: str, allowed: Allowed) -> list[str]:
    return [
        f"{grant.account} cannot {verb} {grant.resource}"
        + (f" in {in_namespace(grant, namespace)}" if grant.namespace else "")
        for grant in grants
        for verb in grant.verbs
        if not allowed(grant, verb)
    ]


def _by_review(reader: ClusterReader, namespace: str) -> Allowed:
    def allowed(grant: Grant, verb: str) -> bool:
        resource, _, subresource = grant.resource.partition("/")
        attributes = {"verb": verb, "group": grant.group, "resource": resource}
        if subresource:
            attributes["subresource"] = subresource
        if grant.namespace:
            attributes["namespace"] = in_namespace(grant, namespace)
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": f"system:serviceaccount:{namespace}:{grant.account}",
                "groups": [
                    "system:serviceaccounts",
                    f"system:serviceaccounts:{namespace}",
                    "system:authenticated",
                ],
                "resourceAttributes": attributes,
            },
        }
        try:
            answer = reader.review_access(review)
        except ReadRefused as error:
            if error.status in (401, 403):
                raise _ReviewsRefused from None
            raise
        return answer.get("status", {}).get("allowed") is True

    return allowed


def _by_roles(reader: ClusterReader, namespace: str) -> Allowed:
    """Rules bound to each account: cluster-wide from ClusterRoleBindings, per namespace from
    RoleBindings (to a Role of that namespace or a ClusterRole)."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    cluster_rules: dict[str, list[JSON]] = {}
    for binding in _items(reader.get(f"{rbac}/clusterrolebindings")):
        for account in _accounts(binding, namespace):
            cluster_rules.setdefault(account, []).extend(_role_rules(reader, binding, None))
    namespaced: dict[tuple[str, str], list[JSON]] = {}
    for where in {in_namespace(grant, namespace) for grant in GRANTS if grant.namespace}:
        for binding in _items(reader.get(f"{rbac}/namespaces/{where}/rolebindings")):
            for account in _accounts(binding, namespace):
                namespaced.setdefault((account, where), []).extend(
                    _role_rules(reader, binding, where)
                )

    def allowed(grant: Grant, verb: str) -> bool:
        rules = list(cluster_rules.get(grant.account, []))
        if grant.namespace:
            rules += namespaced.get((grant.account, in_namespace(grant, namespace)), [])
        return any(_covers(rule, grant, verb) for rule in rules)

    return allowed


def _items(listed: JSON) -> list[JSON]:
    return [item for item in listed.get("items") or [] if isinstance(item, dict)]


def _accounts(binding: JSON, namespace: str) -> list[str]:
    return [
        str(subject.get("name"))
        for subject in binding.get("subjects") or []
        if isinstance(subject, dict)
        and subject.get("kind") == "ServiceAccount"
        and subject.get("namespace") == namespace
    ]


def _role_rules(reader: ClusterReader, binding: JSON, where: str | None) -> list[JSON]:
    ref = binding.get("roleRef") or {}
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    if ref.get("kind") == "ClusterRole":
        path = f"{rbac}/clusterroles/{ref.get('name')}"
    elif where is not None:
        path = f"{rbac}/namespaces/{where}/roles/{ref.get('name')}"
    else:
        return []
    try:
        role = reader.get(path)
    except ReadRefused as error:
        if error.status == 404:
            return []  # a binding to a missing role grants nothing
        raise
    return [rule for rule in role.get("rules") or [] if isinstance(rule, dict)]


def _covers(rule: JSON, grant: Grant, verb: str) -> bool:
    def has(key: str, value: str) -> bool:
        values = rule.get(key) or []
        return value in values or "*" in values

    return has("apiGroups", grant.group) and has("resources", grant.resource) and has("verbs", verb)
