"""What the RolloutBook's tests share: the rollout rules, shadows drawn by hypothesis, a book
that has recorded some shadows, and a plan summed up for comparison."""

from __future__ import annotations

from datetime import datetime

from hypothesis import strategies as st

from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import ChangeKind, RolloutPlan, RolloutRules
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.shadow import Shadow
from brupop.domain.states import StateTimeouts
from brupop.domain.states import UpdateState as S
from tests.unit.domain.controller_shadows import NEW, NOW, OLD, ago, shadow

TIMEOUTS = StateTimeouts(
    idle=20, staged_and_performed_update=40, rebooted_into_update=30, monitoring_update=20
)
RULES = RolloutRules(ConcurrencyLimit(2), TIMEOUTS, controller_node="node-1")
STATES = list(S)
VERSIONS = [OLD, NEW, "1.21.0"]
NODES = [f"node-{i}" for i in range(6)]


def book_of(*shadows: Shadow, now: datetime = NOW) -> RolloutBook:
    """A book under `RULES` that recorded these shadows at `now`."""
    book = RolloutBook(RULES)
    for one in shadows:
        book.record(one, now)
    return book


def plan_summary(plan: RolloutPlan) -> list[tuple[str, ChangeKind, object]]:
    """The plan's changes as (shadow, kind, spec), in shadow order."""
    return sorted((c.shadow.name, c.kind, c.spec) for c in plan.changes)


@st.composite
def shadows(draw: st.DrawFn, node: str) -> Shadow:
    """Any shadow of `node`: any spec but ErrorReset, any state, versions, stamp and crashes."""
    state = draw(st.sampled_from([None, *STATES]))
    crashes = draw(st.integers(min_value=0, max_value=4))
    return shadow(
        node,
        spec=draw(st.sampled_from([s for s in STATES if s is not S.ERROR_RESET])),
        state=state,
        current=draw(st.sampled_from(VERSIONS)),
        target=draw(st.sampled_from(VERSIONS)),
        stamped=draw(st.sampled_from([None, ago(10), ago(35), ago(100)])),
        crashes=crashes,
        failed_at=draw(st.sampled_from([None, ago(60), ago(200), ago(2000)])) if crashes else None,
        rv=str(draw(st.integers(min_value=1, max_value=10**6))),
    )
