"""RolloutBook: every shadow's decision, kept current one changed shadow at a time.

The controller tells the book which shadows changed (`record`, `drop`); the book takes the
few facts a decision reads from each of them once (`ShadowFacts`), decides it
(`decision.decide`) and keeps what a pass needs without looking at the others:
the nodes holding a slot, the nodes ready to start in their start order, the pending spec
changes, and the count of hosts by state and version. A decision that time alone can change
(the end of a backoff, a transition's deadline) is filed in a heap by that moment, and
`due(now)` names the shadows to decide again. `plan` then costs the changes and starts it
returns, not the size of the fleet. `rollout.plan_rollout` stays the full recomputation that
this must always agree with.

A paused node (`hold_back`: its Node carries the pause label) keeps its decision but leaves the
ready list, so it never gets a slot; the fleet-wide pause is the caller's `may_start`.

A shadow that cannot be judged (an instant no node can have seen, `report_bounds`, or an error
while reading or deciding it) is quarantined: it keeps a slot if its spec or status is outside
Idle, never starts, has no change written, and the others are decided as if it were not there.
It is looked at again each `QUARANTINE_RECHECK` and whenever it changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.decision import Decision, decide
from brupop.domain.rollout.recheck_schedule import RecheckSchedule
from brupop.domain.rollout.report_bounds import shadow_problem
from brupop.domain.rollout.rollout import (
    ChangeKind,
    Chooser,
    RolloutPlan,
    RolloutRules,
    SpecChange,
)
from brupop.domain.rollout.shadow_facts import ShadowFacts
from brupop.domain.rollout.start_queue import ReadyKey, StartQueue
from brupop.domain.rollout.variant_versions import VariantVersions
from brupop.domain.shadow import Shadow
from brupop.domain.timestamps import later

QUARANTINE_RECHECK = timedelta(minutes=1)
MAX_QUARANTINE_TEXT = 300


class RolloutBook:
    """Decisions by shadow name, with their fleet-wide aggregates."""

    def __init__(self, rules: RolloutRules) -> None:
        self._rules = rules
        self._shadows: dict[str, Shadow] = {}
        self._facts: dict[str, ShadowFacts] = {}
        """What decisions and aggregates read: the models are kept only for writes and
        REASONs (reading them in a loop over the fleet costs twice as much per shadow at 10k
        as at 1k, see `shadow_facts`)."""
        self._decisions: dict[str, Decision] = {}
        self._holders: set[str] = set()
        self._changes: set[str] = set()
        self._ready = StartQueue()
        self._rechecks = RecheckSchedule()
        self._held_back: set[str] = set()
        self._quarantined: dict[str, str] = {}
        self.states: Counter[str] = Counter()
        self.versions: Counter[str] = Counter()
        self.targets: Counter[str] = Counter()
        """Hosts by the version their agent is offered (the rollout's target is the highest)."""
        self.variant_versions = VariantVersions()
        """Versions run or offered by variant, of every shadow held (quarantined ones too)."""
        self.decided = 0
        """How many decisions were computed so far (what an unchanged pass must not add to)."""

    # --- what changed ----------------------------------------------------------------------

    def record(self, shadow: Shadow, now: datetime) -> bool:
        """Decide `shadow` (new or changed); True when its decision differs from before."""
        name = shadow.name
        self._forget_counts(name)
        self._shadows[name] = shadow
        self.variant_versions.add(shadow)
        try:
            problem = shadow_problem(shadow, now)
            facts = ShadowFacts.of(shadow, self._rules.timeouts) if problem is None else None
        except Exception as error:  # a bug met this shadow: it alone is set aside
            problem, facts = _unjudged(error), None
        if facts is None:
            return self._quarantine(shadow, problem or "cannot be judged", now)
        self._quarantined.pop(name, None)
        self._facts[name] = facts
        if facts.current_state is not None:
            self.states[facts.current_state.value] += 1
            self.versions[facts.current_version] += 1
            self.targets[facts.target_version] += 1
        return self._decide(facts, now, changed=True)

    def drop(self, name: str) -> None:
        """The shadow is gone."""
        self._forget_counts(name)
        self._shadows.pop(name, None)
        self._facts.pop(name, None)
        self._held_back.discard(name)
        self._quarantined.pop(name, None)
        self._file(name, None)

    def hold_back(self, name: str, held: bool) -> bool:
        """Keep `name` from starting (its node is paused) or let it start again; True when
        that changed anything."""
        if held == (name in self._held_back):
            return False
        set_member(self._held_back, name, held)
        decision = self._decisions.get(name)
        if decision is not None and decision.ready:
            self._ready.remove(name)
            if not held:
                self._add_ready(name)
        return True

    def held_back(self) -> frozenset[str]:
        """The shadows kept from starting by a pause of their own."""
        return frozenset(self._held_back)

    def due(self, now: datetime) -> list[str]:
        """Shadows whose decision time alone may have changed by `now` (each named once)."""
        return self._rechecks.due(now)

    def redecide(self, names: Iterable[str], now: datetime) -> list[str]:
        """Decide the named shadows again (same shadow, later time); those whose decision
        changed."""
        facts, again, quarantined = self._facts, self._decide, self._quarantined
        return [
            n
            for n in names
            if n in facts
            and (
                self.record(self._shadows[n], now)
                if n in quarantined
                else again(facts[n], now, changed=False)
            )
        ]

    # --- what a pass reads -----------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._shadows)

    def __contains__(self, name: str) -> bool:
        return name in self._shadows

    def shadow(self, name: str) -> Shadow | None:
        """The shadow the current decision was made from."""
        return self._shadows.get(name)

    def facts(self, name: str) -> ShadowFacts | None:
        """What the current decision was made from."""
        return self._facts.get(name)

    def quarantined(self) -> dict[str, str]:
        """The shadows set aside because they cannot be judged, with why."""
        return dict(self._quarantined)

    def is_quarantined(self, name: str) -> bool:
        """`name` is set aside (`quarantined`)."""
        return name in self._quarantined

    def names(self) -> list[str]:
        """Every shadow's name."""
        return list(self._shadows)

    def holders(self) -> set[str]:
        """Names of the shadows holding a slot."""
        return set(self._holders)

    @property
    def controller_node(self) -> str | None:
        """The node the controller runs on (it updates last)."""
        return self._rules.controller_node

    @property
    def held(self) -> int:
        """How many slots are held."""
        return len(self._holders)

    @property
    def ready_count(self) -> int:
        """How many nodes wait only for a slot and a window (paused nodes not counted)."""
        return len(self._ready)

    @property
    def waiting(self) -> int:
        """How many nodes would start but for a slot, the window or a pause."""
        decisions = self._decisions
        paused = sum(1 for n in self._held_back if (d := decisions.get(n)) is not None and d.ready)
        return len(self._ready) + paused

    def ready_names(self) -> list[str]:
        """The ready nodes, in the order they get slots."""
        return self._ready.names()

    def plan(
        self,
        now: datetime,
        *,
        may_start: bool,
        withheld: Collection[str] = (),
        only: Collection[str] | None = None,
        limit: ConcurrencyLimit | None = None,
        choose: Chooser | None = None,
    ) -> RolloutPlan:
        """This pass's spec changes: every pending change, then starts into free slots.

        `withheld` names shadows whose pending change must wait (the health gate holds them);
        `only`, when given, names the only shadows that may start (the canaries, before they
        have soaked). `limit` replaces the rules' global limit (the update policy's
        `maxConcurrent`); `choose` picks the starts among the ready names and free slots (the
        start rules and order: `start_selection`), else the first ready ones start. `ready`
        of the plan is left empty: the book keeps the ready nodes (`ready_names`)."""
        changes = [self._change(n, now) for n in sorted(self._changes) if n not in withheld]
        if may_start and self._ready:
            slots = limit or self._rules.limit
            if only is None:  # the ready names are listed only when a start is possible
                free = slots.free_slots(self.held, wanted=len(self._ready))
                ready = self._ready.names(None if choose and free else free)
            else:
                ready = self._ready.among(only)
                free = slots.free_slots(self.held, wanted=len(ready))
            chosen = choose(ready, free) if choose is not None and free else ready[:free]
            changes += [self._start(name, now) for name in chosen]
        return RolloutPlan(changes=tuple(changes), slots_held=self.held, ready=())

    def is_ready(self, name: str) -> bool:
        """The shadow waits only for a slot and a window."""
        return name in self._ready

    # --- bookkeeping -----------------------------------------------------------------------

    def _decide(self, facts: ShadowFacts, now: datetime, *, changed: bool) -> bool:
        """Decide a shadow (`changed`: a new version of it, else the same one, later)."""
        self.decided += 1
        try:
            decision = decide(facts, now)
        except Exception as error:  # a bug met this shadow: it alone is set aside
            return self._quarantine(self._shadows[facts.name], _unjudged(error), now)
        return self._keep(facts, decision, changed=changed)

    def _quarantine(self, shadow: Shadow, why: str, now: datetime) -> bool:
        """Set `shadow` aside: a slot if it is outside Idle, nothing else; True when its
        decision changed."""
        facts = self._facts[shadow.name] = ShadowFacts.set_aside(shadow)
        self._quarantined[shadow.name] = why[:MAX_QUARANTINE_TEXT]
        decision = Decision(facts.holds_slot, recheck_at=later(now, QUARANTINE_RECHECK))
        return self._keep(facts, decision, changed=True)

    def _keep(self, facts: ShadowFacts, decision: Decision, *, changed: bool) -> bool:
        """File `decision` for `facts`' shadow; True when it differs from the one before."""
        name = facts.name
        old = self._decisions.get(name)
        if decision == old and self._rechecks.at(name) == decision.recheck_at:
            if changed and decision.ready and self._ready.key(name) != self._ready_key(facts):
                self._file(name, decision)  # the start order follows the crash count
            return False
        self._file(name, decision)
        if decision.recheck_at is not None:
            self._rechecks.set(name, decision.recheck_at)
        return decision != old

    def _file(self, name: str, decision: Decision | None) -> None:
        """Put `name` in the aggregates its decision calls for (none when None)."""
        self._rechecks.cancel(name)
        self._ready.remove(name)
        if decision is None:
            self._decisions.pop(name, None)
            self._holders.discard(name)
            self._changes.discard(name)
            return
        self._decisions[name] = decision
        set_member(self._holders, name, decision.holds_slot)
        set_member(self._changes, name, decision.change is not None)
        if decision.ready and name not in self._held_back:
            self._add_ready(name)

    def _add_ready(self, name: str) -> None:
        self._ready.put(self._ready_key(self._facts[name]))

    def _ready_key(self, facts: ShadowFacts) -> ReadyKey:
        """As `ordering.update_order`: the controller's node last, fewest crashes, then name
        (a ready node always has a status)."""
        controller = self._rules.controller_node
        last = controller is not None and facts.node_name == controller
        return ReadyKey(controller_last=last, crash_count=facts.crash_count, name=facts.name)

    def _forget_counts(self, name: str) -> None:
        if (held := self._shadows.get(name)) is not None:
            self.variant_versions.remove(held)
        old = self._facts.get(name)
        if old is not None and old.current_state is not None:
            _decrement(self.states, old.current_state.value)
            _decrement(self.versions, old.current_version)
            _decrement(self.targets, old.target_version)

    def _change(self, name: str, now: datetime) -> SpecChange:
        decision = self._decisions[name]
        assert decision.change is not None and decision.target is not None
        return SpecChange(self._shadows[name], decision.target.spec(now), decision.change)

    def _start(self, name: str, now: datetime) -> SpecChange:
        target = self._decisions[name].target
        assert target is not None
        return SpecChange(self._shadows[name], target.spec(now), ChangeKind.START)


def set_member(members: set[str], name: str, present: bool) -> None:
    """`name` in `members` when `present`, out of it otherwise."""
    if present:
        members.add(name)
    else:
        members.discard(name)


def _decrement(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]


def _unjudged(error: Exception) -> str:
    """Why a shadow could not be judged, in a line."""
    return f"cannot be judged: {type(error).__name__}: {error}"
