"""Policy lint: the rules of a policy that, over these nodes, do nothing or can never work.

A canary selector that picks no opted-in node turns canaries off without a word; a budget
grouped by a label no node has is one group over the whole fleet; a window that never opens
holds every start; a probe or a Prometheus the address allowance refuses never answers. Each
finding names the field, so `brupop plan` and `brupop simulate` can say it in one line.
Pure: the caller gives the moment, the Nodes and the address allowance in force.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.address_allowance import ALLOWANCE_SETTING, AddressAllowance
from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.policy.probe_url import fill_probe_template
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from brupop.domain.windows.zoned_window import WindowError, parse_window

WINDOW_LOOKAHEAD = timedelta(days=30)
"""How far ahead a window must open at least once."""
_PLACEHOLDER_IP = "192.0.2.1"  # a documentation address, for a node without one


@dataclass(frozen=True)
class PolicyFinding:
    """One rule that does nothing: the field (as written in the object) and why."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def lint_policy(
    policy: EffectivePolicy,
    nodes: Sequence[Node],
    now: datetime,
    addresses: AddressAllowance | None = None,
) -> tuple[PolicyFinding, ...]:
    """Every rule of `policy` that does nothing over `nodes` (the opted-in ones are judged)
    from `now` on, or reaches an address `addresses` (default: the controller's) refuses."""
    opted_in = [n for n in nodes if n.labels.get(OPT_IN_LABEL) == OPT_IN_VALUE]
    refusals = addresses if addresses is not None else AddressAllowance()
    return (
        *_canary(policy, opted_in),
        *_budgets(policy, opted_in),
        *_windows(policy, now),
        *_probes(policy, opted_in, refusals),
        *_prometheus(policy, refusals),
    )


def _canary(policy: EffectivePolicy, opted_in: Sequence[Node]) -> list[PolicyFinding]:
    canary = policy.canary
    if canary is None or not opted_in:
        return []
    total = len(opted_in)
    selector = canary.label_selector
    if selector is not None:
        picked = sum(1 for node in opted_in if selector.matches(node.labels))
        if picked == 0:
            message = f"{canary.selector!r} picks none of the {total} opted-in nodes"
            return [PolicyFinding("spec.canary.selector", f"{message}: there are no canaries")]
        if picked == total:
            message = f"{canary.selector!r} picks all {total} opted-in nodes"
            return [PolicyFinding("spec.canary.selector", f"{message}: none waits for a soak")]
        return []
    if canary.count is not None and canary.count >= total:
        message = f"{canary.count} canaries of {total} opted-in nodes: none waits for a soak"
        return [PolicyFinding("spec.canary.count", message)]
    return []


def _budgets(policy: EffectivePolicy, opted_in: Sequence[Node]) -> list[PolicyFinding]:
    if not opted_in:
        return []
    findings = []
    for index, budget in enumerate(policy.scheduling.budgets):
        if not any(budget.group_by in node.labels for node in opted_in):
            findings.append(
                PolicyFinding(
                    f"spec.budgets[{index}].groupBy",
                    f"no opted-in node has the label {budget.group_by!r}: the "
                    f"{len(opted_in)} nodes form one group",
                )
            )
    return findings


def _windows(policy: EffectivePolicy, now: datetime) -> list[PolicyFinding]:
    findings = []
    days = WINDOW_LOOKAHEAD.days
    for index, window in enumerate(policy.scheduling.windows):
        try:
            zoned = parse_window(window.cron, window.time_zone)
        except WindowError:  # the spec was checked when read; nothing more to say here
            continue
        if zoned.next_open(now, now + WINDOW_LOOKAHEAD) is None:
            findings.append(
                PolicyFinding(
                    f"spec.windows[{index}].cron",
                    f"{window.cron!r} ({window.time_zone}) does not open in the next {days} days",
                )
            )
    return findings


def _probes(
    policy: EffectivePolicy, opted_in: Sequence[Node], refusals: AddressAllowance
) -> list[PolicyFinding]:
    gate = policy.health_gate
    if gate is None:
        return []
    findings = []
    for index, probe in enumerate(gate.http_probes):
        refused = _refused_probe(probe.url, opted_in, refusals)
        if refused is not None:
            field = f"spec.healthGate.httpProbes[{index}].url"
            findings.append(PolicyFinding(field, refused))
    return findings


def _refused_probe(
    template: str, opted_in: Sequence[Node], refusals: AddressAllowance
) -> str | None:
    """Why the probe is refused for some node (how many of them too); None if it is not."""
    if not opted_in:
        return _refusal(template, refusals)
    reasons = []
    for node in opted_in:
        try:
            url = fill_probe_template(template, node.name, node.internal_ip or _PLACEHOLDER_IP)
        except ValueError:  # an unusable node address is the probe's own failure, per node
            continue
        reason = _refusal(url, refusals)
        if reason is not None:
            reasons.append(reason)
    if not reasons:
        return None
    total = len(opted_in)
    share = "every opted-in node" if len(reasons) == total else f"{len(reasons)} of {total} nodes"
    return f"{reasons[0]}, for {share}"


def _prometheus(policy: EffectivePolicy, refusals: AddressAllowance) -> list[PolicyFinding]:
    gate = policy.alert_gate
    if gate is None:
        return []
    refused = _refusal(gate.prometheus_url, refusals)
    if refused is None:
        return []
    return [PolicyFinding("spec.alertGate.prometheusUrl", f"{refused}: the gate holds every start")]


def _refusal(url: str, refusals: AddressAllowance) -> str | None:
    """Why the controller will not connect to `url` whatever its names resolve to; None when
    that depends on a lookup, or it is allowed."""
    host = urlsplit(url).hostname or ""
    if not host or "{" in host:
        return None
    reason = refusals.name_refusal(host)
    if reason is None and _is_address(host):
        reason = refusals.address_refusal(host, host)
    if reason is None:
        return None
    return f"the controller refuses to connect: {reason} (not allowed by {ALLOWANCE_SETTING})"


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
