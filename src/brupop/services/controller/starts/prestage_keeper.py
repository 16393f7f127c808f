"""PrestageKeeper: asks Idle nodes to prepare their next version ahead of their turn (leader only).

Each pass it reads the nodes that are Idle and not in their turn, lets the domain rule choose
(`prestage_choice`), and writes the spec of each node it changes: `prestage_version` set to ask
for a preparation, cleared to stop asking. With prestaging off it costs nothing once no spec
asks any more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

import structlog

from brupop.domain.policy.effective_policy import EffectivePolicy
from brupop.domain.rollout.rollout import ChangeKind, RolloutPlan, SpecChange
from brupop.domain.safety.withdrawal import is_withdrawn
from brupop.domain.shadow import Shadow, ShadowSpec
from brupop.domain.starting.prestage_choice import (
    PrestageCandidate,
    PrestageWrite,
    may_stage_now,
    prestage_writes,
)
from brupop.domain.starting.start_holds import StartCandidate, StartRule
from brupop.domain.states import UpdateState
from brupop.ports.cluster.event_recorder import EventRecorder
from brupop.ports.cluster.shadow_repository import ShadowRepository
from brupop.ports.errors import ConflictError, NotFoundError
from brupop.services.controller.starts.prestage_events import PrestageEvents
from brupop.services.controller.writing.write_journal import WriteJournal

_IDLE = UpdateState.IDLE


@dataclass
class PrestageOutcome:
    """What one pass wrote: the shadows stored and the names that met a conflict."""

    stored: list[Shadow] = field(default_factory=list)
    conflicted: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FleetStop:
    """Whether the fleet is stopped and what the clock allows, as the pass saw it."""

    stopped: bool
    window_open: bool
    opens_at: datetime | None


def candidate_of(shadow: Shadow) -> PrestageCandidate | None:
    """The shadow as a prestage candidate: Idle by spec and by status, so not in its turn."""
    status = shadow.status
    if shadow.spec.state is not _IDLE or status is None or status.current_state is not _IDLE:
        return None
    return PrestageCandidate(
        shadow.name,
        status.current_version,
        status.target_version,
        shadow.spec.prestage_version,
        status.staged_version,
        status.staged_state,
    )


def _preparing_in_turn(shadow: Shadow) -> bool:
    """The node stages in its turn and its host does not hold the version yet: a download."""
    status, spec = shadow.status, shadow.spec
    return (
        spec.state is UpdateState.STAGED_AND_PERFORMED_UPDATE
        and status is not None
        and status.current_state is _IDLE
        and status.staged_version != spec.version
    )


def _held_versions(
    versions: StartRule | None, candidates: Iterable[PrestageCandidate], now: datetime
) -> frozenset[str]:
    """The offered versions the version gate holds at `now` (a pin, a release too young)."""
    if versions is None:
        return frozenset()
    targets = {c.target_version: c.name for c in candidates}
    return frozenset(
        target
        for target, name in targets.items()
        if versions.hold(StartCandidate(name, name, target, None), now) is not None
    )


def _pin(policy: EffectivePolicy) -> str | None:
    version = policy.scheduling.version
    return version.pin if version is not None else None


class PrestageKeeper:
    """Writes the prestage requests the rule chooses; tracks whether any spec still asks."""

    def __init__(
        self,
        shadows: ShadowRepository,
        journal: WriteJournal,
        events: EventRecorder,
    ) -> None:
        self._shadows = shadows
        self._journal = journal
        self._told = PrestageEvents(events)
        self._log = structlog.get_logger(__name__)
        self._maybe_asking = True  # a spec from an earlier replica may ask

    def keep(
        self,
        fleet: Iterable[Shadow],
        policy: EffectivePolicy,
        stop: FleetStop,
        now: datetime,
        may_write: Callable[[], bool],
        versions: StartRule | None = None,
    ) -> PrestageOutcome:
        """Bring the specs in line with the policy; nothing when off and nothing asks.
        `versions`: the version gate in force (its release age holds preparations too)."""
        prestage = policy.prestage
        enabled = prestage is not None and prestage.enabled
        if not enabled and not self._maybe_asking:
            return PrestageOutcome()
        active = (
            prestage is not None
            and not stop.stopped
            and may_stage_now(prestage, now, window_open=stop.window_open, opens_at=stop.opens_at)
        )
        shadows = {s.name: s for s in fleet}
        candidates = [c for s in shadows.values() if (c := candidate_of(s)) is not None]
        in_turn = sum(1 for s in shadows.values() if _preparing_in_turn(s))
        writes = prestage_writes(
            prestage,
            candidates,
            active=active,
            pin=_pin(policy),
            preparing_in_turn=in_turn,
            held=_held_versions(versions, candidates, now) if active else (),
        )
        self._told.held(shadows, candidates)
        outcome = PrestageOutcome()
        for write in writes:
            if not may_write():
                break
            self._write(shadows[write.name], write, outcome)
        self._maybe_asking = enabled or any(c.asked is not None for c in candidates)
        return outcome

    def _write(self, shadow: Shadow, write: PrestageWrite, outcome: PrestageOutcome) -> None:
        spec = shadow.spec.model_copy(update={"prestage_version": write.version})
        try:
            stored = self._shadows.replace_spec(shadow.name, spec, shadow.resource_version)
        except ConflictError:
            outcome.conflicted.append(shadow.name)
            return
        except NotFoundError:
            return
        self._journal.remember(shadow.name, shadow.resource_version)
        outcome.stored.append(stored)
        log = self._log.bind(node=shadow.node_name, shadow=shadow.name)
        if write.version is None:
            log.info("prestage.stopped", version=shadow.spec.prestage_version)
            self._told.stopped(shadow, shadow.spec.prestage_version)
        else:
            log.info("prestage.asked", version=write.version)
            self._told.asked(shadow, write.version)

    def withdraw(
        self,
        plan: RolloutPlan,
        holders: Iterable[Shadow],
        policy: EffectivePolicy,
        *,
        stopped: bool,
        now: datetime,
    ) -> RolloutPlan:
        """With prestaging on: `plan` with every in-flight node the fleet no longer wants
        (paused, halted, pinned below) sent back to Idle before it reboots."""
        prestage = policy.prestage
        if prestage is None or not prestage.enabled:
            return plan
        pin = _pin(policy)
        back = [s for s in holders if is_withdrawn(s, stopped=stopped, pin=pin)]
        if not back:
            return plan
        names = {s.name for s in back}
        kept = [c for c in plan.changes if c.shadow.name not in names]
        for shadow in back:
            self._log.info(
                "update.withdrawn",
                node=shadow.node_name,
                version=shadow.spec.version,
                why="paused or halted" if stopped else f"pinned to {pin}",
            )
        idle = [
            SpecChange(
                s,
                ShadowSpec(
                    state=UpdateState.IDLE, state_transition_timestamp=now, version=s.spec.version
                ),
                ChangeKind.RESET,
            )
            for s in back
        ]
        return replace(plan, changes=(*kept, *idle))
