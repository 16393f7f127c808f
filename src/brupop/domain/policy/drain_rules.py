"""DrainRules: what one drain follows, the update policy's `drain` section over the environment.

The environment's DRAIN_TIMEOUT_SECONDS is the timeout unless the policy sets `timeoutSeconds`;
with no policy (or no `drain` section) a drain behaves as the original's: each pod's own grace
period, and at the timeout the node returns to service with its pods (`skip`).

A policy editor is not trusted with the cluster's own namespaces: `forceNamespaces` never forces
pods in `kube-system`, `kube-public`, `kube-node-lease` or brupop's namespace (the protected
ones) unless the apiserver's APISERVER_FORCE_NAMESPACES_ALLOWED lists them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from brupop.domain.cluster.objects import Pod
from brupop.domain.policy.scheduling_policy import (
    FORCE_NAMESPACES_MAX,
    DrainSpec,
    OnDrainTimeout,
)

FORCE_ALLOWANCE_SETTING = "APISERVER_FORCE_NAMESPACES_ALLOWED"
FORCE_ALLOWANCE_MAX_LENGTH = 4096
# The namespaces Kubernetes itself runs in; with brupop's own, never forced by default.
CLUSTER_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
NAMESPACE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


class ForceAllowanceError(ValueError):
    """APISERVER_FORCE_NAMESPACES_ALLOWED cannot be read; the message names the entry."""


def read_force_allowance(text: str) -> frozenset[str]:
    """The namespaces `text` lists, comma- or space-separated; ForceAllowanceError if any
    entry is not a namespace name or the list is too long."""
    if len(text) > FORCE_ALLOWANCE_MAX_LENGTH:
        raise ForceAllowanceError(f"longer than {FORCE_ALLOWANCE_MAX_LENGTH} characters")
    entries = [entry for entry in re.split(r"[,\s]+", text) if entry]
    if len(entries) > FORCE_NAMESPACES_MAX:
        raise ForceAllowanceError(f"more than {FORCE_NAMESPACES_MAX} namespaces ({len(entries)})")
    for entry in entries:
        if not NAMESPACE_NAME.match(entry):
            raise ForceAllowanceError(f"{entry[:80]!r} is not a namespace name")
    return frozenset(entries)


def protected_namespaces(own_namespace: str, allowed: Iterable[str] = ()) -> frozenset[str]:
    """The namespaces a forced drain leaves alone: the cluster's and brupop's, less `allowed`."""
    return (CLUSTER_NAMESPACES | {own_namespace}) - frozenset(allowed)


@dataclass(frozen=True)
class DrainRules:
    """The bounds and the timeout behaviour of one drain."""

    timeout_seconds: float
    grace_period_seconds: int | None = None
    on_timeout: OnDrainTimeout = OnDrainTimeout.SKIP
    force_namespaces: frozenset[str] = frozenset()
    from_policy: bool = False
    protected_namespaces: frozenset[str] = CLUSTER_NAMESPACES

    @property
    def forcing(self) -> bool:
        """At the timeout, blocking pods of the listed namespaces are deleted."""
        return self.on_timeout is OnDrainTimeout.FORCE

    @property
    def refused_namespaces(self) -> frozenset[str]:
        """The namespaces the policy would force that are protected (so never forced)."""
        return self.force_namespaces & self.protected_namespaces if self.forcing else frozenset()

    def may_force(self, pod: Pod) -> bool:
        """`pod` may be deleted without eviction once the drain times out."""
        return (
            self.forcing
            and pod.namespace in self.force_namespaces
            and pod.namespace not in self.protected_namespaces
        )


def drain_rules(
    policy: DrainSpec | None,
    environment_timeout_seconds: float,
    protected: frozenset[str] = CLUSTER_NAMESPACES,
) -> DrainRules:
    """The rules of a drain that starts under `policy` (None: the environment's alone), never
    forcing pods in the `protected` namespaces."""
    if policy is None:
        return DrainRules(
            timeout_seconds=environment_timeout_seconds, protected_namespaces=protected
        )
    timeout = policy.timeout_seconds
    return DrainRules(
        timeout_seconds=float(timeout) if timeout is not None else environment_timeout_seconds,
        grace_period_seconds=policy.grace_period_seconds,
        on_timeout=policy.on_timeout,
        force_namespaces=frozenset(policy.force_namespaces),
        from_policy=True,
        protected_namespaces=protected,
    )
