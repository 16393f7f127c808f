"""Events about the update policy: what the controller records against the `default`
BottlerocketUpdatePolicy when the policy in force changes in a way a person should hear about.

Pure decisions over two EffectivePolicy values (before and after a read of the object), so the
controller only has to record what they return:

* the object was deleted: back to the environment's behaviour (Normal, `PolicyDeleted`);
* the object cannot be used: the reason, and what stays in force (Warning, `PolicyInvalid`);
* objects with other names are ignored (Warning, `PolicyIgnored`, once per name).
"""

from __future__ import annotations

from collections.abc import Iterable

from brupop.domain.cluster.objects import ClusterEvent, EventSubject, EventType
from brupop.domain.policy.effective_policy import EffectivePolicy, PolicySource
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME, KIND

POLICY_DELETED = "PolicyDeleted"
POLICY_INVALID = "PolicyInvalid"
POLICY_IGNORED = "PolicyIgnored"

DELETED_MESSAGE = (
    f"{KIND} {DEFAULT_POLICY_NAME} was deleted: back to the defaults (nothing paused, no "
    "health gate, no halt, no canaries, no alert gate; the rest from the controller's "
    "environment)."
)


def _came_from_an_object(policy: EffectivePolicy) -> bool:
    return policy.source is not PolicySource.ENVIRONMENT or policy.problem is not None


def policy_change_event(
    previous: EffectivePolicy, current: EffectivePolicy, namespace: str
) -> ClusterEvent | None:
    """The Event to record when the policy in force goes from `previous` to `current`, if any."""
    deleted = (
        _came_from_an_object(previous)
        and current.source is PolicySource.ENVIRONMENT
        and current.problem is None
    )
    if deleted:
        return _event(namespace, POLICY_DELETED, DELETED_MESSAGE, EventType.NORMAL)
    if current.problem is not None and current.problem != previous.problem:
        kept = (
            "the last good policy stays in force"
            if current.source is PolicySource.LAST_GOOD
            else "the defaults stay in force"
        )
        message = f"{KIND} {DEFAULT_POLICY_NAME} cannot be used ({current.problem}): {kept}."
        return _event(namespace, POLICY_INVALID, message, EventType.WARNING)
    return None


def ignored_policy_events(
    ignored: Iterable[str], already_warned: Iterable[str], namespace: str
) -> list[ClusterEvent]:
    """A warning against each ignored policy object not warned about yet."""
    warned = set(already_warned)
    return [
        ClusterEvent(
            name,
            namespace,
            POLICY_IGNORED,
            f"brupop follows only the {KIND} named {DEFAULT_POLICY_NAME!r} in {namespace}; "
            f"{name!r} is ignored.",
            EventType.WARNING,
            EventSubject.UPDATE_POLICY,
        )
        for name in sorted(set(ignored) - warned)
    ]


def _event(namespace: str, reason: str, message: str, kind: EventType) -> ClusterEvent:
    return ClusterEvent(
        DEFAULT_POLICY_NAME, namespace, reason, message, kind, EventSubject.UPDATE_POLICY
    )
