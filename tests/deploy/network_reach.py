"""Who may open a TCP connection to a pod, read from rendered NetworkPolicies (ingress only).

A small reading of the NetworkPolicy rules, enough for the chart's policies: a pod no policy
selects takes anything; otherwise one rule of one selecting policy must allow the source (a
peer) on the port (numbers only). A source that is not a pod (the kube-apiserver, a load
balancer) matches only `ipBlock` peers, or a rule without `from`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.deploy.rendering import Rendered

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class Source:
    """Where a connection comes from: a pod (namespace and labels) or an address outside pods."""

    namespace: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    namespace_labels: Mapping[str, str] = field(default_factory=dict)
    address: str = "10.0.0.5"

    @property
    def all_namespace_labels(self) -> dict[str, str]:
        named = {NAMESPACE_NAME_LABEL: self.namespace} if self.namespace else {}
        return {**self.namespace_labels, **named}


def may_reach(
    rendered: Rendered, source: Source, namespace: str, labels: Mapping[str, str], port: int
) -> bool:
    """Whether `source` may connect to `port` of a pod with `labels` in `namespace`."""
    policies = [
        policy["spec"]
        for policy in rendered.of_kind("NetworkPolicy")
        if policy["metadata"]["namespace"] == namespace
        and selects(policy["spec"]["podSelector"], labels)
        and "Ingress" in policy["spec"].get("policyTypes", ["Ingress"])
    ]
    if not policies:
        return True
    return any(
        _rule_allows(rule, source, namespace, port)
        for spec in policies
        for rule in spec.get("ingress") or []
    )


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether a label selector selects `labels` (an empty selector selects everything)."""
    if not selector.get("matchLabels", {}).items() <= labels.items():
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values", [])
        matches = {
            "In": key in labels and labels[key] in values,
            "NotIn": key not in labels or labels[key] not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]
        if not matches:
            return False
    return True


def _rule_allows(rule: Mapping[str, Any], source: Source, namespace: str, port: int) -> bool:
    ports = rule.get("ports")
    if ports and not any(entry.get("port") in (None, port) for entry in ports):
        return False
    peers = rule.get("from")
    if not peers:
        return True
    return any(_peer_allows(peer, source, namespace) for peer in peers)


def _peer_allows(peer: Mapping[str, Any], source: Source, namespace: str) -> bool:
    if "ipBlock" in peer:
        block = peer["ipBlock"]
        address = ipaddress.ip_address(source.address)
        excepted = any(address in ipaddress.ip_network(c) for c in block.get("except", []))
        return address in ipaddress.ip_network(block["cidr"]) and not excepted
    if source.namespace is None:
        return False
    namespace_selector = peer.get("namespaceSelector")
    if namespace_selector is None:
        in_namespace = source.namespace == namespace
    else:
        in_namespace = selects(namespace_selector, source.all_namespace_labels)
    pod_selector = peer.get("podSelector")
    return in_namespace and (pod_selector is None or selects(pod_selector, source.labels))
