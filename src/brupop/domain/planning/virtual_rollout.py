"""VirtualRollout: the controller's passes stepped forward on a virtual clock.

Every shadow goes into a `RolloutBook`, as the controller's mirror puts it there. Each virtual
pass then does what a controller pass does with starts: the fleet-wide holds (halt, pause,
clock), the canaries, and `RolloutBook.plan` with the global limit and a `StartSelection` over
the same start rules, in the same start order (cheapest-first by the same eviction costs, or by
name). A node started is taken to finish `expected_seconds` later (a node already in flight,
that long after its last transition), when its slot frees; a node whose host holds its version
prepared ahead (pre-staging), `staged_seconds` later: its turn has no download. The clock then
jumps to the next moment anything can change: a finish, a window opening, a blackout's end, a
hold's end (a release's age, a node's age), a backoff's end, a soak's end; with none left, the
plan ends.
Pure: the snapshot and the assumptions are all it reads.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from brupop.domain.capacity.fleet_census import FleetCensus
from brupop.domain.cluster.objects import Node
from brupop.domain.planning.canary_plan import CanaryPlan
from brupop.domain.planning.fleet_holds import FleetHolds
from brupop.domain.planning.hold_log import HoldLog
from brupop.domain.planning.pass_rules import PassRules
from brupop.domain.planning.plan_inputs import FleetSnapshot, PlanAssumptions
from brupop.domain.policy.scheduling_policy import StartOrder, concurrency_limit
from brupop.domain.policy.update_policy import NODE_PAUSED_LABEL, NODE_PAUSED_VALUE
from brupop.domain.reason import Reason
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import RolloutRules
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.shadow import Shadow, ShadowSpec, ShadowStatus
from brupop.domain.starting.release_quorum import VersionQuorum
from brupop.domain.starting.start_holds import StartCandidate, StartHold
from brupop.domain.starting.start_selection import StartSelection
from brupop.domain.starting.versions_first_seen import first_seen_times, note_at_quorum
from brupop.domain.states import UpdateState
from brupop.domain.timestamps import later

PASSES_PER_NODE = 20  # a bound on the passes: each one is a finish or a hold's end


class VirtualRollout:
    """One plan's run: construct it over a snapshot, `run()` it, then read what it saw."""

    def __init__(self, snapshot: FleetSnapshot, assumptions: PlanAssumptions) -> None:
        self.began = self.now = snapshot.taken_at
        self._expected = timedelta(seconds=assumptions.expected_seconds)
        staged = assumptions.staged_seconds
        self._staged = self._expected if staged is None else timedelta(seconds=staged)
        self.staged_ahead: set[str] = set()
        """The shadows started with their version prepared ahead (a shorter turn)."""
        self._end = snapshot.taken_at + assumptions.horizon
        self._controller_node = assumptions.controller_node
        policy = snapshot.policy
        self.nodes = {node.name: node for node in snapshot.opted_in()}
        self.limit = _limit(policy.scheduling.max_concurrent, assumptions.limit, len(self.nodes))
        self.book = RolloutBook(RolloutRules(self.limit, controller_node=self._controller_node))
        self.census = FleetCensus.of(
            snapshot.taken_at, snapshot.nodes, snapshot.pods, snapshot.budgets
        )
        self._by_cost = policy.scheduling.order is StartOrder.CHEAPEST_FIRST
        self.holds = HoldLog()
        self.fleet = FleetHolds(policy, snapshot.status, assumptions.expected_seconds)
        self.starts: dict[str, datetime] = {}
        self.finishes: dict[str, datetime] = {}
        self.in_flight: set[str] = set()
        self._finishing: dict[str, datetime] = {}
        self._backoffs: dict[str, datetime] = {}
        self._load(snapshot)
        seen = snapshot.status.versions_first_seen if snapshot.status is not None else ()
        quorum = VersionQuorum.of(self.book.targets, len(self.book), assumptions.release_age_quorum)
        first_seen = first_seen_times(note_at_quorum(seen, quorum, self.now))
        opted_in = tuple(self.nodes.values())
        self._rules = PassRules(policy, opted_in, self.census, first_seen, quorum)
        self._canaries = CanaryPlan.of(policy.canary, snapshot.status, self.book, self.nodes)

    def run(self) -> None:
        """Pass after pass until nothing is left to start, or nothing more can change."""
        for _ in range(PASSES_PER_NODE * (len(self.book) + 1)):
            self._finish_due()
            self.book.redecide(self.book.due(self.now), self.now)
            if not (self.book.ready_count or self._finishing or self._backoffs):
                return
            upcoming = [
                *self._pass(),
                *self._finishing.values(),
                *self._backoffs.values(),
                self._canaries.soak_ends,
            ]
            later = [t for t in upcoming if t is not None and t > self.now]
            if not later or min(later) > self._end:
                return
            self.now = min(later)

    def started_in_order(self) -> list[str]:
        """The shadows the plan started, in the order it started them."""
        return list(self.starts)

    # --- one pass ------------------------------------------------------------------------

    def _pass(self) -> list[datetime | None]:
        """Start what may start now, note why the rest wait; the moments their holds lift."""
        now, book = self.now, self.book
        ready = book.ready_names()
        upcoming: list[datetime | None] = []
        blocked = self.fleet.hold(now)
        if blocked is not None:
            for name in ready:
                self.holds.note(name, blocked, now)
            return [blocked.until]
        only, waiting = self._canaries.only(now)
        selection = StartSelection(
            self._rules.rules(self._in_use(), self._leaving()),
            self._candidate,
            now,
            costs=self.census if self._by_cost else None,
            controller_node=self._controller_node,
        )
        plan = book.plan(now, may_start=True, only=only, limit=self.limit, choose=selection)
        started = set(plan.started())
        for name in plan.started():
            self._start(name)
        for name in ready:
            if name in started:
                continue
            hold = selection.holds.get(name)
            if hold is None and only is not None and name not in only and waiting is not None:
                hold = waiting
            self.holds.note(name, hold or self._no_slot(), now)
            upcoming.append(hold.until if hold is not None else None)
        return upcoming

    def _no_slot(self) -> StartHold:
        held, limit = self.book.held, self.limit.maximum
        return StartHold(Reason.CONCURRENCY_FULL, f"{held}/{limit} nodes updating")

    def _candidate(self, name: str) -> StartCandidate:
        facts = self.book.facts(name)
        assert facts is not None  # the book lists only the shadows it holds as ready
        node = self.nodes.get(facts.node_name)
        return StartCandidate(name, facts.node_name, facts.target_version, node)

    def _in_use(self) -> list[Node | None]:
        book = self.book
        return [
            self.nodes.get(facts.node_name)
            for name in book.holders()
            if (facts := book.facts(name)) is not None
        ]

    def _leaving(self) -> list[str]:
        book = self.book
        return [facts.node_name for n in book.holders() if (facts := book.facts(n)) is not None]

    # --- the virtual fleet ---------------------------------------------------------------

    def _load(self, snapshot: FleetSnapshot) -> None:
        """The shadows of opted-in nodes into the book; nodes in flight finish after the
        expected duration from their last transition; paused and backing-off ones noted."""
        now, book = self.now, self.book
        for shadow in snapshot.shadows:
            node = self.nodes.get(shadow.node_name)
            if node is None:
                continue  # an orphan: the controller deletes it
            book.record(shadow, now)
            if node.labels.get(NODE_PAUSED_LABEL) == NODE_PAUSED_VALUE:
                book.hold_back(shadow.name, True)
                if (facts := book.facts(shadow.name)) is not None and facts.offered:
                    pause = StartHold(Reason.PAUSED, f"node paused ({NODE_PAUSED_LABEL})")
                    self.holds.note(shadow.name, pause, now)
        for name in book.holders():
            held = book.shadow(name)
            stamp = held.spec.state_transition_timestamp if held is not None else None
            self._finishing[name] = max(now, later(stamp or now, self._expected))
            self.in_flight.add(name)
        for name in book.names():
            facts = book.facts(name)
            if facts is None or name in self._finishing or book.is_ready(name):
                continue
            allowed = facts.allowed_at
            if facts.offered and allowed is not None and allowed > now:
                self._backoffs[name] = allowed
                detail = "backing off after a failure"
                self.holds.note(name, StartHold(Reason.BACKING_OFF, detail, allowed), now)

    def _start(self, name: str) -> None:
        shadow = self.book.shadow(name)
        facts = self.book.facts(name)
        assert shadow is not None and facts is not None
        spec = ShadowSpec(
            state=UpdateState.STAGED_AND_PERFORMED_UPDATE,
            state_transition_timestamp=self.now,
            version=facts.target_version,
        )
        self.book.record(shadow.model_copy(update={"spec": spec}), self.now)
        self.holds.lifted(name, self.now)
        self.starts[name] = self.now
        ahead = staged_ahead(shadow.status, facts.target_version)
        if ahead:
            self.staged_ahead.add(name)
        self._finishing[name] = self.now + (self._staged if ahead else self._expected)

    def _finish_due(self) -> None:
        """Every node whose expected finish has come is Idle on its target."""
        now, book = self.now, self.book
        for name in [n for n, at in self._finishing.items() if at <= now]:
            at = self._finishing.pop(name)
            shadow = book.shadow(name)
            if shadow is None or shadow.status is None:
                continue
            book.record(_updated(shadow), now)
            self.finishes[name] = at
            self._canaries.finished(shadow.node_name, at)
        for name in [n for n, at in self._backoffs.items() if at <= now]:
            del self._backoffs[name]
            self.holds.lifted(name, now)


def staged_ahead(status: ShadowStatus | None, version: str) -> bool:
    """The host holds `version` prepared ahead and not activated (Staged)."""
    return (
        status is not None
        and status.staged_version == version
        and (status.staged_state == "Staged")
    )


def _updated(shadow: Shadow) -> Shadow:
    """`shadow` once its update is done: Idle on the version it was offered, spec cleared."""
    status = shadow.status
    assert status is not None
    done = ShadowStatus(
        current_version=status.target_version,
        target_version=status.target_version,
        current_state=UpdateState.IDLE,
    )
    return shadow.model_copy(update={"spec": ShadowSpec(), "status": done})


def _limit(
    policy_value: int | str | None, default: ConcurrencyLimit, nodes: int
) -> ConcurrencyLimit:
    """As `StartRules.limit`: the policy's `maxConcurrent` of the opted-in nodes, else the
    environment's."""
    if policy_value is None:
        return default
    return ConcurrencyLimit(concurrency_limit(policy_value, max(1, nodes)))
