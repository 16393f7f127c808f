"""PolicyFollower: the update policy in force, followed through an informer like the shadows.

It mirrors the BottlerocketUpdatePolicy objects of brupop's namespace (a list, then the
watch: a change wakes the controller, which applies it on its next pass), resolves the
`default` one into the policy in force (`effective_policy.resolve_policy`: a bad spec keeps the
last good policy, a deleted object returns to the environment's behaviour) and, as leader,
tells what it saw: a warning Event once per ignored object (another name), an Event when the
spec cannot be used or the object is deleted, and the status of `default`, written through the
status subresource only when it differs from the one the object shows.
"""

from __future__ import annotations

from datetime import datetime

import structlog

from brupop.domain.cluster.objects import ClusterEvent, Listing
from brupop.domain.policy.effective_policy import (
    ENVIRONMENT_POLICY,
    EffectivePolicy,
    resolve_policy,
)
from brupop.domain.policy.policy_events import ignored_policy_events, policy_change_event
from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.reporting.policy_status import FleetProgress, policy_status
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.update_policy_repository import UpdatePolicyRepository
from brupop.ports.errors import ConflictError, PortError
from brupop.services.runtime.informer import Informer
from brupop.services.runtime.mirror import NAME_OF, RESOURCE_VERSION_OF, Mirror


class PolicyFollower:
    """The policy objects of one namespace, the policy in force, and its status."""

    def __init__(
        self, policies: UpdatePolicyRepository, events: EventRecorder, namespace: str
    ) -> None:
        self._policies = policies
        self._events = events
        self._namespace = namespace
        self.mirror: Mirror[UpdatePolicy] = Mirror(NAME_OF, RESOURCE_VERSION_OF)
        self.informer = Informer("policies", self._list, policies.watch, self.mirror)
        self.policy: EffectivePolicy = ENVIRONMENT_POLICY
        self._unwarned: set[str] = set()
        self._warned: set[str] = set()
        self._notes: list[ClusterEvent] = []
        self._unreadable = False
        self._refused: UpdatePolicyStatus | None = None  # the last status write that failed
        self._published: tuple[object, ...] | None = None  # inputs of the status last shown
        self._log = structlog.get_logger(__name__)

    def catch_up(self, *, followed: bool, resync: bool) -> None:
        """As the fleet mirror: a list at first and on a resync, else poll when no follower
        thread applies the watch's events. A policy that cannot be read (its CRD not
        installed yet, no permission) never holds up the rollout: the policy in force stays
        as it was, and the failure is logged once until reading works again."""
        try:
            if resync or not self.mirror.filled:
                self.informer.relist()
            elif not followed:
                self.informer.poll()
        except PortError as error:
            if not self._unreadable:
                self._log.warning("policy.unreadable", error=str(error)[:300])
            self._unreadable = True
            return
        self._unreadable = False

    def absorb(self, *, leading: bool) -> bool:
        """Apply the changes seen since the last pass; True when the pause changed."""
        changed = self.mirror.take_changes()
        for name in changed - {DEFAULT_POLICY_NAME}:
            if self.mirror.get(name) is None:
                self._unwarned.discard(name)
                self._warned.discard(name)
            elif name not in self._warned:
                self._unwarned.add(name)
        paused_before = self.policy.paused
        if DEFAULT_POLICY_NAME in changed:
            self._resolve(self.mirror.get(DEFAULT_POLICY_NAME))
        if leading:
            self._tell()
        else:
            self._notes.clear()  # the leader tells these
        return self.policy.paused != paused_before

    def status_seen(self) -> tuple[UpdatePolicyStatus | None, str | None]:
        """The status `default` shows now and its resourceVersion (None, None when absent)."""
        current = self.mirror.get(DEFAULT_POLICY_NAME)
        if current is None:
            return None, None
        return current.status, current.resource_version

    def publish_status(self, progress: FleetProgress, now: datetime) -> UpdatePolicy | None:
        """Write the status of `default` when it differs from what the object shows (leader
        only: the caller asks only while leading); the object written, None when nothing was.
        The write is conditional on the resourceVersion read, so a resume (which clears a halt
        through the status) is never overwritten unseen: the next pass reads it first."""
        current = self.mirror.get(DEFAULT_POLICY_NAME)
        if current is None:
            return None
        # A quiet pass changes none of the inputs: skip building the status (pydantic) again.
        inputs = (self.policy, progress.key(), current.resource_version, current.generation)
        if inputs == self._published:
            return None
        wanted = policy_status(self.policy, progress, generation=current.generation, now=now)
        if wanted == current.status:
            self._published = inputs
            return None
        try:
            written = self._policies.update_status(wanted, current.resource_version)
        except ConflictError:
            self._log.debug("policy.status_changed_meanwhile")
            return None
        except PortError as error:  # NotFoundError too: the deletion's event follows
            emit = self._log.debug if wanted == self._refused else self._log.warning
            emit("policy.status_not_written", error=str(error)[:300])
            self._refused = wanted
            return None
        self._refused = None
        self.mirror.put(written)
        self._published = (
            self.policy,
            progress.key(),
            written.resource_version,
            written.generation,
        )
        self._log.debug("policy.status_written", phase=wanted.phase.value)
        return written

    def _list(self) -> Listing[UpdatePolicy]:
        """The namespace's policy objects; the ignored ones are known by name only."""
        snapshot = self._policies.read()
        found = [snapshot.default] if snapshot.default is not None else []
        found += [UpdatePolicy(n, self._namespace, spec=None) for n in snapshot.ignored]
        return Listing(tuple(found), snapshot.resource_version)

    def _resolve(self, current: UpdatePolicy | None) -> None:
        old = self.policy
        new = resolve_policy(current, old)
        if new == old:
            return
        self.policy = new
        self._log.info(
            "policy.changed",
            source=new.source.value,
            paused=new.paused,
            generation=new.generation,
            problem=new.problem,
        )
        event = policy_change_event(old, new, self._namespace)
        if event is not None:
            self._notes.append(event)

    def _tell(self) -> None:
        """Record the pending Events: the notes of this pass and the ignored objects."""
        notes = ignored_policy_events(self._unwarned, self._warned, self._namespace)
        self._warned |= self._unwarned
        self._unwarned.clear()
        notes += self._notes
        self._notes = []
        for event in notes:
            self._events.record(event)
