"""The `default` policy's rules over the opted-in nodes: a rule that does nothing here (a canary
selector no node matches, a budget grouped by a label no node has, a window that does not open
in 30 days, a probe or Prometheus the controller refuses) fails, naming its field."""

from __future__ import annotations

from datetime import datetime

from brupop.adapters.kubernetes.resources.nodes import node_from_object
from brupop.adapters.kubernetes.resources.update_policies import PLURAL, VERSION
from brupop.cli.doctor.reading import ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed
from brupop.domain.policy.effective_policy import resolve_policy
from brupop.domain.policy.policy_lint import lint_policy
from brupop.domain.policy.policy_object import PolicyObjectError, policy_from_object
from brupop.domain.shadow import API_GROUP, OPT_IN_LABEL
from brupop.ports.errors import InvalidObjectError

CHECK = "policy rules"


def check_policy_rules(reader: ClusterReader, namespace: str, now: datetime) -> DoctorFinding:
    """Every rule of `default` acts on the opted-in nodes; none at all is a pass."""
    path = f"/apis/{API_GROUP}/{VERSION}/namespaces/{namespace}/{PLURAL}/default"
    try:
        obj = reader.get(path)
        listed = reader.get("/api/v1/nodes", {"labelSelector": OPT_IN_LABEL})
    except ReadRefused as error:
        if error.status == 404:
            return passed(CHECK, "no policy object `default`: no rule to check")
        return failed(CHECK, f"cannot read the policy or the nodes ({error})", "kubectl get nodes")
    try:
        policy = resolve_policy(policy_from_object(obj))
        nodes = [node_from_object(item) for item in listed.get("items") or []]
    except (PolicyObjectError, InvalidObjectError) as error:
        return failed(CHECK, f"cannot be judged: {error}", "see the update policy check")
    findings = lint_policy(policy, nodes, now)
    if findings:
        return failed(
            CHECK,
            "; ".join(str(finding) for finding in findings),
            f"fix the field named (kubectl -n {namespace} edit {PLURAL} default), and check "
            "with brupop plan",
        )
    return passed(CHECK, f"every rule of `default` acts on the {len(nodes)} opted-in nodes")
