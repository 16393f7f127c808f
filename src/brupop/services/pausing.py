"""Pausing and resuming, as `brupop pause` and `brupop resume` do it: the fleet through the
`default` BottlerocketUpdatePolicy, one node through its `brupop.bottlerocket.aws/paused` label.

Every policy write is a read-modify-write guarded by the resourceVersion it was computed from.
When someone else (a person with kubectl, the controller writing the status) changed the object
in between, the write fails with a conflict and the whole step starts again from a fresh read,
a bounded number of times. So a resume never undoes a change it did not see, and the controller
(which writes its status guarded the same way) never undoes a resume it did not see.

A pause is a round trip: with no policy, `pause` creates one that changes nothing but `paused`
(domain/policy/pause_only.py) and `resume` deletes it again while nobody has changed it; a
resume with no policy writes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.pause_only import is_pause_only, pause_only_spec
from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.domain.policy.update_policy import (
    NODE_PAUSED_LABEL,
    NODE_PAUSED_VALUE,
)
from brupop.domain.policy.update_policy_status import HaltReason
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.cluster.update_policy_repository import UpdatePolicyRepository
from brupop.ports.errors import AlreadyExistsError, ConflictError, NotFoundError

ATTEMPTS = 5


@dataclass(frozen=True)
class FleetChange:
    """What a pause or resume did to the `default` policy (None: there is none, nor was)."""

    policy: UpdatePolicy | None
    created: bool = False
    deleted: bool = False  # a resume removed the policy its pause had created
    paused_changed: bool = False
    halt_cleared: bool = False
    cleared_halt: HaltReason | None = None

    @property
    def changed(self) -> bool:
        """Anything was written at all."""
        return self.created or self.deleted or self.paused_changed or self.halt_cleared


@dataclass(frozen=True)
class NodeChange:
    """What a pause or resume did to one Node's label."""

    node: Node
    changed: bool


class FleetPause:
    """Pause and resume the whole fleet through the `default` policy."""

    def __init__(self, policies: UpdatePolicyRepository, attempts: int = ATTEMPTS) -> None:
        self._policies = policies
        self._attempts = attempts

    def pause(self) -> FleetChange:
        """Set `spec.paused`; when there is no policy, create one that changes nothing else."""
        return self._retrying(lambda: self._set_or_create(paused=True))

    def resume(self) -> FleetChange:
        """Delete the policy a pause created; else clear `spec.paused`, then a recorded halt
        (separate writes: spec, then the status subresource, each retried); with no policy,
        nothing."""
        unpaused = self._retrying(self._unpause)
        if unpaused.policy is None or unpaused.deleted:
            return unpaused
        cleared = self._retrying(lambda: self._clear_halt(unpaused.policy))
        return FleetChange(
            cleared.policy,
            paused_changed=unpaused.paused_changed,
            halt_cleared=cleared.halt_cleared,
            cleared_halt=cleared.cleared_halt,
        )

    def _unpause(self) -> FleetChange:
        current = self._current()
        if current is None:
            return FleetChange(None)
        if is_pause_only(current):
            try:
                self._policies.delete_default(current.resource_version or "")
            except NotFoundError:  # someone else deleted it meanwhile: nothing left to resume
                return FleetChange(None)
            halt = current.status.halt_reason if current.status is not None else None
            halted = current.status is not None and current.status.halted
            return FleetChange(current, deleted=True, halt_cleared=halted, cleared_halt=halt)
        return self._set(current, paused=False)

    def _set_or_create(self, paused: bool) -> FleetChange:
        current = self._current()
        if current is None:
            created = self._policies.create(pause_only_spec(paused), pause_created=True)
            return FleetChange(created, created=True)
        return self._set(current, paused)

    def _set(self, current: UpdatePolicy, paused: bool) -> FleetChange:
        if current.spec is not None and current.spec.paused == paused:
            return FleetChange(current)
        # An unreadable spec gets `paused` written too: it is what the person asked for.
        written = self._policies.set_paused(paused, current.resource_version or "")
        return FleetChange(written, paused_changed=True)

    def _clear_halt(self, unpaused: UpdatePolicy | None) -> FleetChange:
        current = self._current()
        if current is None:  # deleted meanwhile: no halt left to clear
            return FleetChange(unpaused)
        status = current.status
        if status is None or not status.halted:
            return FleetChange(current)
        written = self._policies.update_status(status.resumed(), current.resource_version or "")
        return FleetChange(written, halt_cleared=True, cleared_halt=status.halt_reason)

    def _retrying(self, step: Callable[[], FleetChange]) -> FleetChange:
        for _ in range(self._attempts):
            try:
                return step()
            except (ConflictError, AlreadyExistsError):
                continue  # someone else wrote in between: read again and redo the step
        raise ConflictError(
            f"the update policy kept changing while it was written ({self._attempts} attempts)"
        )

    def _current(self) -> UpdatePolicy | None:
        try:
            return self._policies.get()
        except NotFoundError:
            return None


def pause_node(nodes: NodeRepository, name: str) -> NodeChange:
    """Label the Node paused; NotFoundError when there is no such Node."""
    node = nodes.get(name)
    if node.labels.get(NODE_PAUSED_LABEL) == NODE_PAUSED_VALUE:
        return NodeChange(node, changed=False)
    return NodeChange(nodes.set_labels(name, {NODE_PAUSED_LABEL: NODE_PAUSED_VALUE}), True)


def resume_node(nodes: NodeRepository, name: str) -> NodeChange:
    """Remove the Node's paused label; NotFoundError when there is no such Node."""
    node = nodes.get(name)
    if NODE_PAUSED_LABEL not in node.labels:
        return NodeChange(node, changed=False)
    return NodeChange(nodes.set_labels(name, {NODE_PAUSED_LABEL: None}), True)
