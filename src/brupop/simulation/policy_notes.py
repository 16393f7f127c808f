"""What simulate says about its `--policy` before the fleet starts: the rules that do nothing
over the simulated nodes (`policy_lint`), and that its alert gate is a stand-in.

The simulated Prometheus answers at whatever `prometheusUrl` says, with no alert, so a URL
that would hold a real rollout (unreachable, refused) rolls here: simulate says so rather than
let an OK verdict speak for the gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.effective_policy import resolve_policy
from brupop.domain.policy.policy_lint import lint_policy
from brupop.domain.policy.policy_object import PolicyObjectError, policy_from_object
from brupop.domain.policy.probe_url import shown_url


def policy_notes(
    policy: Mapping[str, Any] | None, nodes: Sequence[Node], now: datetime
) -> list[str]:
    """One line per rule of `policy` (the checked --policy object) that does nothing over
    `nodes`, then the alert gate's stand-in, if the policy has one."""
    if policy is None:
        return []
    try:
        effective = resolve_policy(policy_from_object(policy))
    except PolicyObjectError:  # --policy was checked when read; nothing more to say here
        return []
    lines = [f"policy: {finding}" for finding in lint_policy(effective, nodes, now)]
    gate = effective.alert_gate
    if gate is not None:
        lines.append(
            f"policy: spec.alertGate.prometheusUrl: {shown_url(gate.prometheus_url)} is not "
            "asked; simulate's alert gate is a stand-in that reports no alert, where a real "
            "controller holds while it cannot ask"
        )
    return lines
