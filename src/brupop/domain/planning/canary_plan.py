"""CanaryPlan: the policy's canaries on the virtual clock.

Chosen as the controller's CanaryKeeper chooses them when a rollout begins: among the nodes
still to update, by label selector or as the first `count` in the controller's order
(`canary.choose_canaries`). Until every canary has finished and soaked for `soakSeconds`,
only canaries start, and every other ready node waits with CANARY_SOAK. A soak the policy's
status already shows as over holds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from brupop.domain.cluster.objects import Node
from brupop.domain.policy.update_policy import CanarySpec
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.reason import Reason
from brupop.domain.rollout.ordering import update_order
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.safety.canary import choose_canaries
from brupop.domain.starting.start_holds import StartHold
from brupop.domain.timestamps import later


class CanaryPlan:
    """The canaries of one plan (none: nothing to wait for) and when each finished."""

    def __init__(
        self,
        canaries: Mapping[str, str],
        soak_seconds: float,
        *,
        soaking_until: datetime | None = None,
    ) -> None:
        """`canaries`: shadow name to node name; `soaking_until`: the end of a soak the
        status shows under way (every canary done)."""
        self._canaries = dict(canaries)
        self._soak = timedelta(seconds=soak_seconds)
        self._finished: dict[str, datetime] = {}
        self._soaking_until = soaking_until

    @classmethod
    def of(
        cls,
        canary: CanarySpec | None,
        status: UpdatePolicyStatus | None,
        book: RolloutBook,
        nodes: Mapping[str, Node],
    ) -> CanaryPlan:
        """The canaries `canary` picks in `book` (none without a canary rule, or when the
        status shows their soak over)."""
        progress = status.canary if status is not None else None
        if canary is None:
            return cls({}, 0)
        if progress is not None and progress.soak_ends_at is not None:
            return cls({}, 0, soaking_until=progress.soak_ends_at)
        pending = [
            s for n in book.names() if (f := book.facts(n)) is not None and f.offered
            if (s := book.shadow(n)) is not None
        ]  # fmt: skip
        ordered = update_order(pending, book.controller_node)
        labels = {name: node.labels for name, node in nodes.items()}
        chosen = choose_canaries(ordered, canary, labels)
        picked = {s.name: s.node_name for s in ordered if s.node_name in chosen}
        return cls(picked, canary.soak_seconds)

    def finished(self, node_name: str, at: datetime) -> None:
        """The node `node_name` finished its update at `at`."""
        if node_name in self._canaries.values():
            self._finished[node_name] = at

    @property
    def soak_ends(self) -> datetime | None:
        """When the soak ends (None: a canary has not finished yet, or there are none)."""
        if not self._canaries:
            return self._soaking_until
        if len(self._finished) < len(self._canaries):
            return None
        return later(max(self._finished.values()), self._soak)

    def only(self, now: datetime) -> tuple[frozenset[str] | None, StartHold | None]:
        """The only shadows that may start at `now` (None: any) and the hold of the others."""
        ends = self.soak_ends
        if not self._canaries and ends is None:
            return None, None
        if ends is not None and now >= ends:
            return None, None
        done, total = len(self._finished), len(self._canaries)
        if ends is None:
            detail = f"waiting for canaries: {done}/{total} updated"
        else:
            detail = f"canaries soaking until {ends.isoformat(timespec='seconds')}"
        return frozenset(self._canaries), StartHold(Reason.CANARY_SOAK, detail, until=ends)
