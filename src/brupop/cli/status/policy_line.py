"""The first line of `brupop status` when a `default` BottlerocketUpdatePolicy exists: the
policy's phase and message, as the controller last wrote them in its status.

The controller's `/status` does not carry the policy (yet), so the command reads the object
itself through the Kubernetes API, with the same configuration it used to reach the controller.
A `/status` document that does carry a `policy` entry is shown as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubernetes.client import ApiClient, Configuration

from brupop.adapters.kubernetes.api.calls import ApiCalls
from brupop.adapters.kubernetes.resources.update_policies import (
    PLURAL,
    KubernetesUpdatePolicyRepository,
)
from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.ports.errors import ForbiddenError, NotFoundError, PortError, UnauthorizedError


class PolicyUnreadable(Exception):
    """The policy could not be read; the message says why (the table is still shown)."""


def read_policy(
    configuration: Configuration, namespace: str, timeout: float
) -> UpdatePolicy | None:
    """The `default` policy of `namespace`, or None when there is none."""
    api_client = ApiClient(configuration)
    try:
        calls = ApiCalls(
            api_client, request_timeout_seconds=timeout, connect_timeout_seconds=timeout
        )
        return KubernetesUpdatePolicyRepository(calls, namespace).get()
    except NotFoundError:
        return None
    except (UnauthorizedError, ForbiddenError) as error:
        raise PolicyUnreadable(
            f"cannot read the update policy ({error}): your kubeconfig's user needs `get` on "
            f"`{PLURAL}` in {namespace}"
        ) from None
    except PortError as error:
        raise PolicyUnreadable(f"cannot read the update policy ({error})") from None
    finally:
        api_client.close()


def policy_summary(policy: UpdatePolicy) -> dict[str, Any]:
    """What `brupop status` shows of the policy (and puts under `policy` in its JSON)."""
    paused = policy.spec.paused if policy.spec is not None else None
    if policy.status is not None:
        phase, message = str(policy.status.phase), policy.status.message
    elif policy.spec is None:
        phase, message = "Unreadable", f"the spec cannot be used: {policy.problem}"
    else:
        phase = "Paused" if paused else "Unknown"
        message = "the controller has not written a status yet"
    return {"name": policy.name, "phase": phase, "message": message, "paused": paused}


def policy_line(summary: Mapping[str, Any]) -> str:
    """`Policy default: Halted - Halted: node-b failed its health gate (nodeReady).`"""
    line = f"Policy {summary.get('name', 'default')}: {summary.get('phase', 'Unknown')}"
    message = summary.get("message")
    return f"{line} - {message}" if message else line
