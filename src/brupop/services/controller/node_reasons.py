"""NodeReasons: each node's reason code, kept current without explaining every node each pass.

A node's reason is explained again only when something it depends on may have changed: its
shadow or its decision, its slot (nodes in a slot are few and depend on drains and timeouts),
its start in this pass or the last one, or, for nodes ready to start, the fleet-wide inputs
(window open or not, the policy's clock hold, concurrency full or not, fleet paused or not).
The counts by reason are kept alongside for the nodes-waiting metric, and one log line is
written when a node's reason changes. The full rows of `brupop status` are built on demand
(`waiting_reason.report`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

import structlog

from brupop.domain.reason import Reason
from brupop.domain.reporting.waiting_reason import RolloutView, explain
from brupop.domain.shadow import Shadow

_TROUBLE = frozenset(
    {
        Reason.TIMED_OUT,
        Reason.CRASHED,
        Reason.DRAIN_BLOCKED,
        Reason.BACKING_OFF,
        Reason.NO_STATUS,
        Reason.QUARANTINED,
        Reason.BOOT_MODE_CHANGED,
    }
)


class NodeReasons:
    """Reason codes by shadow name, their counts, and the log of their changes."""

    def __init__(self, log: structlog.typing.FilteringBoundLogger) -> None:
        self._log = log
        self._reasons: dict[str, Reason] = {}
        self.counts: Counter[Reason] = Counter()
        self._fleet_key: tuple[object, ...] | None = None
        self.explained = 0
        """How many nodes were explained so far (an unchanged pass adds only those in a slot)."""

    def fleet_changed(self, view: RolloutView, held: int) -> bool:
        """The fleet-wide inputs of a ready node's reason changed since the last call."""
        maximum = view.rollout_rules.limit.maximum
        key = (
            view.window_open,
            view.schedule_hold,
            maximum is not None and held >= maximum,
            view.paused,
            view.halted is not None,
            view.blocked is not None,
            view.soak is not None,
        )
        changed, self._fleet_key = key != self._fleet_key, key
        return changed

    def refresh(
        self,
        names: Iterable[str],
        shadow_of: Callable[[str], Shadow | None],
        view: RolloutView,
        held: int,
    ) -> None:
        """Explain the named nodes again (`held`: slots after the pass); a missing one is
        forgotten."""
        for name in names:
            shadow = shadow_of(name)
            if shadow is None:
                self._set(name, None)
                continue
            why = explain(shadow, view, held=held)
            self.explained += 1
            if self._set(name, why.reason):
                emit = self._log.info if why.reason in _TROUBLE else self._log.debug
                emit(
                    "node.reason", node=shadow.node_name, reason=why.reason.value, detail=why.detail
                )

    def waiting(self) -> dict[str, int]:
        """Nodes per waiting reason, every waiting reason present."""
        return {r.value: self.counts.get(r, 0) for r in Reason if r.is_waiting}

    def _set(self, name: str, reason: Reason | None) -> bool:
        old = self._reasons.pop(name, None)
        if old is not None:
            self.counts[old] -= 1
        if reason is not None:
            self._reasons[name] = reason
            self.counts[reason] += 1
        return reason is not None and reason is not old
