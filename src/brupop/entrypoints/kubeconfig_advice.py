"""The one line `brupop status`, `pause` and `resume` print for a kubeconfig they cannot use
(exit 2, a bad setting): the file, the problem, and how to see what kubectl makes of it."""

from __future__ import annotations

from brupop.adapters.kubernetes.kubeconfig import KubeconfigUnusable


def kubeconfig_advice(error: KubeconfigUnusable) -> str:
    """`the kubeconfig F cannot be used: WHY; check it with ...`."""
    return f"{error}; check it with `kubectl config view`, or point KUBECONFIG at another"
