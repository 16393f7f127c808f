"""HookKeeper: the controller's side of the reboot hooks, once per pass (leader only).

For each node holding a slot that stands in a hook phase (staged, before its reboot; or
monitored, after it), it labels the Node to ask the phase's hooks to act, reads their answers
and decides (`decide_hooks`). Once every hook answered, or time ran out, it removes the label
and the answers, so the next phase (or the next update) starts clean. A phase's time starts when
the keeper first sees the node in it (after the reboot: when MonitoringUpdate was asked for,
which the shadow keeps); a controller restart before the reboot restarts that phase's time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import NamedTuple

import structlog

from brupop.domain.policy.update_policy import RebootHooksSpec
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.safety.health_gate import GateVerdict, gate_started_at
from brupop.domain.safety.reboot_hooks import (
    HOOK_LABEL_VALUE,
    HookDecision,
    HookPhase,
    decide_hooks,
    hook_cleanup,
    hook_phase,
    hooks_of,
)
from brupop.domain.shadow import Shadow
from brupop.ports.cluster.node_repository import NodeRepository
from brupop.ports.errors import NotFoundError, PortError


class HookJudgement(NamedTuple):
    """A slot holder in a hook phase and what its hooks decided in this pass."""

    shadow: Shadow
    decision: HookDecision


class _PhaseKey(NamedTuple):
    """One node's phase; the spec's stamp makes a new attempt a new phase."""

    shadow: str
    phase: HookPhase
    stamp: datetime | None


class _Asked(NamedTuple):
    """A phase whose hooks were asked to act: the Node labelled and the hooks named."""

    node: str
    hooks: tuple[str, ...]


class HookKeeper:
    """When each node's hook phase began, and which phases are settled, across passes."""

    def __init__(self, nodes: NodeRepository) -> None:
        self._nodes = nodes
        self._since: dict[_PhaseKey, datetime] = {}
        self._settled: dict[_PhaseKey, HookDecision] = {}  # passed or failed, marks removed
        # Phases asked and not settled: the Node and its hooks, to remove the marks if the node
        # leaves the phase another way (its gate failed, the agent failed, the hooks were
        # removed from the policy), so no hook stays asked for a reboot that is not coming.
        self._asked: dict[_PhaseKey, _Asked] = {}
        self._log = structlog.get_logger("brupop.controller")

    def judge(
        self, hooks: RebootHooksSpec | None, book: RolloutBook, now: datetime
    ) -> dict[str, HookJudgement]:
        """The hook decision of every slot holder in a phase with hooks configured."""
        decisions: dict[str, HookJudgement] = {}
        if hooks is None and not self._asked:
            return decisions
        seen: set[_PhaseKey] = set()
        for name in sorted(book.holders()):
            shadow = book.shadow(name)
            phase = hook_phase(shadow) if shadow is not None else None
            names = hooks_of(hooks, phase) if phase is not None else ()
            if shadow is None or phase is None or not names or hooks is None:
                continue
            key = _PhaseKey(shadow=name, phase=phase, stamp=shadow.spec.state_transition_timestamp)
            seen.add(key)
            decision = self._decide(shadow, phase, names, key, hooks.timeout_seconds, now)
            if decision is not None:
                decisions[name] = HookJudgement(shadow, decision)
        self._forget(seen)
        return decisions

    def _decide(
        self,
        shadow: Shadow,
        phase: HookPhase,
        names: tuple[str, ...],
        key: _PhaseKey,
        timeout_seconds: int,
        now: datetime,
    ) -> HookDecision | None:
        since = self._since.setdefault(key, self._began(shadow, phase, now))
        settled = self._settled.get(key)
        if settled is not None:  # its write may have conflicted: the same verdict again
            return settled
        try:
            node = self._nodes.get(shadow.node_name)
            decision = decide_hooks(
                phase,
                names,
                node.annotations,
                since=since,
                timeout_seconds=timeout_seconds,
                now=now,
            )
            if decision.verdict is GateVerdict.WAIT:
                self._asked[key] = _Asked(node=node.name, hooks=names)
                if node.labels.get(phase.label) != HOOK_LABEL_VALUE:
                    self._nodes.set_labels(node.name, {phase.label: HOOK_LABEL_VALUE})
                    self._log.info("hooks.asked", node=node.name, phase=phase.value)
                    return replace(decision, asked=True)
                return decision
            labels, annotations = hook_cleanup(phase, names)
            self._nodes.set_annotations(node.name, annotations)
            self._nodes.set_labels(node.name, labels)
        except NotFoundError:
            return None  # the Node is gone: opt-out cleanup deals with its shadow
        except PortError as error:
            # The API cannot be reached: wait (the deadline still runs), like a gate check.
            self._log.warning("hooks.unreachable", node=shadow.node_name, error=str(error))
            return decide_hooks(
                phase, names, {}, since=since, timeout_seconds=timeout_seconds, now=now
            )
        self._settled[key] = decision
        self._asked.pop(key, None)
        return decision

    def _withdraw(self, node: str, phase: HookPhase, names: tuple[str, ...]) -> None:
        labels, annotations = hook_cleanup(phase, names)
        try:
            self._nodes.set_annotations(node, annotations)
            self._nodes.set_labels(node, labels)
        except NotFoundError:
            return
        except PortError as error:  # best effort: the label says nothing once the node moved on
            self._log.warning("hooks.withdraw_failed", node=node, error=str(error))
            return
        self._log.info("hooks.withdrawn", node=node, phase=phase.value)

    @staticmethod
    def _began(shadow: Shadow, phase: HookPhase, now: datetime) -> datetime:
        if phase is HookPhase.AFTER_REBOOT:
            return gate_started_at(shadow) or now
        return now

    def _forget(self, seen: Iterable[_PhaseKey]) -> None:
        """Drop the phases no node stands in any more (bounded by the slots held), removing the
        marks of those left unsettled."""
        keep = set(seen)
        for key in [k for k in self._asked if k not in keep]:
            asked = self._asked.pop(key)
            self._withdraw(asked.node, key.phase, asked.hooks)
        self._since = {k: v for k, v in self._since.items() if k in keep}
        self._settled = {k: v for k, v in self._settled.items() if k in keep}
