"""Each opted-in node (its label `bottlerocket.aws/updater-interface-version`) has a Ready
agent pod on it, from the DaemonSet, and a shadow."""

from __future__ import annotations

from brupop.cli.crd.definition import PLURAL
from brupop.cli.doctor.reading import JSON, ClusterReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding, failed, passed
from brupop.domain.shadow import API_GROUP, OPT_IN_LABEL, shadow_name

AGENT_SELECTOR = "brupop.bottlerocket.aws/component=agent"
SHOWN_NODES = 5


def check_agents(reader: ClusterReader, namespace: str) -> DoctorFinding:
    """Every opted-in node with a Ready agent and a shadow; the failure names the nodes."""
    check = "agents"
    try:
        nodes = reader.get("/api/v1/nodes", {"labelSelector": OPT_IN_LABEL})
        pods = reader.get(f"/api/v1/namespaces/{namespace}/pods", {"labelSelector": AGENT_SELECTOR})
        shadows = reader.get(f"/apis/{API_GROUP}/v2/namespaces/{namespace}/{PLURAL}")
    except ReadRefused as error:
        return failed(
            check, f"cannot read nodes, agent pods or shadows ({error})", "kubectl get nodes"
        )
    names = [_name(node) for node in _items(nodes)]
    if not names:
        return failed(
            check,
            f"no node carries the label {OPT_IN_LABEL}",
            f"kubectl label node NODE {OPT_IN_LABEL}=2.0.0",
        )
    ready = {pod.get("spec", {}).get("nodeName") for pod in _items(pods) if _ready(pod)}
    shadowed = {_name(shadow) for shadow in _items(shadows)}
    no_agent = [name for name in names if name not in ready]
    no_shadow = [name for name in names if name in ready and shadow_name(name) not in shadowed]
    if no_agent:
        return failed(
            check,
            f"no Ready agent on {_listed(no_agent)} (of {len(names)} opted-in nodes)",
            f"kubectl -n {namespace} get pods -l {AGENT_SELECTOR} -o wide; "
            f"kubectl -n {namespace} describe daemonset brupop-agent",
        )
    if no_shadow:
        return failed(
            check,
            f"no shadow for {_listed(no_shadow)}",
            f"kubectl -n {namespace} logs -l {AGENT_SELECTOR} (the agent creates it at start)",
        )
    return passed(check, f"{len(names)} opted-in nodes, each with a Ready agent and a shadow")


def _items(listed: JSON) -> list[JSON]:
    return [item for item in listed.get("items") or [] if isinstance(item, dict)]


def _name(obj: JSON) -> str:
    return str(obj.get("metadata", {}).get("name", ""))


def _ready(pod: JSON) -> bool:
    conditions = pod.get("status", {}).get("conditions") or []
    return any(
        isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in conditions
    )


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN_NODES])
    more = len(names) - SHOWN_NODES
    return f"{shown} and {more} more" if more > 0 else shown
