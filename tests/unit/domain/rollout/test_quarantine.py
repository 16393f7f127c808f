"""A shadow the book cannot judge is set aside: it never starts, keeps a slot only when it is
outside Idle, and the others are decided as if it were not there."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.rollout.report_bounds import CLOCK_SKEW
from brupop.domain.rollout.rollout_book import QUARANTINE_RECHECK
from brupop.domain.shadow import Shadow, ShadowStatus
from brupop.domain.states import UpdateState as S
from tests.unit.domain.controller_shadows import NOW, ago, shadow
from tests.unit.domain.rollout.books import book_of, plan_summary, shadows

END_OF_CALENDAR = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def _unjudgeable(node: str) -> Shadow:
    """A shadow whose status no validation would let in: a negative crash count."""
    good = shadow(node, crashes=1, failed_at=ago(3600))
    assert good.status is not None
    broken = ShadowStatus.model_construct(**{**dict(good.status), "crash_count": -1})
    return good.model_copy(update={"status": broken})


def test_a_failure_stamped_at_the_end_of_the_calendar_is_quarantined_and_the_others_start() -> None:
    bad = shadow("node-a", crashes=1, failed_at=END_OF_CALENDAR)
    book = book_of(bad, shadow("node-b"), shadow("node-c"))

    plan = book.plan(NOW, may_start=True)

    assert set(plan.started()) == {"brs-node-b", "brs-node-c"}
    assert "later than now" in book.quarantined()[bad.name]
    assert not book.is_ready(bad.name)


def test_the_others_decisions_are_the_same_with_or_without_the_quarantined_shadow() -> None:
    others = [shadow("node-b"), shadow("node-c", crashes=1, failed_at=ago(7200))]
    with_bad = book_of(shadow("node-a", crashes=1, failed_at=END_OF_CALENDAR), *others)
    without = book_of(*others)

    assert plan_summary(with_bad.plan(NOW, may_start=True)) == plan_summary(
        without.plan(NOW, may_start=True)
    )


def test_a_quarantined_node_outside_idle_keeps_its_slot_and_gets_no_change() -> None:
    updating = shadow(
        "node-a", spec=S.STAGED_AND_PERFORMED_UPDATE, stamped=END_OF_CALENDAR, state=S.IDLE
    )
    book = book_of(updating)

    assert book.is_quarantined(updating.name)
    assert book.holders() == {updating.name}
    assert book.plan(NOW, may_start=True).changes == ()


def test_an_error_while_judging_one_shadow_quarantines_it_alone() -> None:
    book = book_of(_unjudgeable("node-a"), shadow("node-b"))

    assert "cannot be judged: ValueError" in book.quarantined()["brs-node-a"]
    assert book.plan(NOW, may_start=True).started() == ("brs-node-b",)


def test_a_quarantined_shadow_is_judged_again_once_its_instant_is_believable() -> None:
    soon = NOW + CLOCK_SKEW + timedelta(seconds=30)
    book = book_of(shadow("node-a", crashes=1, failed_at=soon))
    assert book.is_quarantined("brs-node-a")

    later = NOW + QUARANTINE_RECHECK
    book.redecide(book.due(later), later)

    assert not book.is_quarantined("brs-node-a")


def test_a_quarantined_shadow_that_changes_into_a_believable_one_leaves_quarantine() -> None:
    book = book_of(shadow("node-a", crashes=1, failed_at=END_OF_CALENDAR))
    book.record(shadow("node-a", crashes=1, failed_at=ago(7200), rv="2"), NOW)

    assert book.quarantined() == {}
    assert book.plan(NOW, may_start=True).started() == ("brs-node-a",)


@settings(max_examples=150, deadline=None)
@given(
    others=st.lists(shadows("x"), min_size=1, max_size=4),
    failed_at=st.datetimes(
        min_value=datetime(2026, 1, 5, 11), timezones=st.just(UTC), allow_imaginary=False
    ),
)
def test_a_future_failure_in_one_idle_shadow_never_changes_the_others_plan(
    others: list[Shadow], failed_at: datetime
) -> None:
    named = [s.model_copy(update={"name": f"brs-o{i}", "node_name": f"o{i}"}) for i, s in
             enumerate(others)]  # fmt: skip
    bad = shadow("node-a", crashes=3, failed_at=failed_at)

    with_bad, without = book_of(bad, *named), book_of(*named)

    assert plan_summary(with_bad.plan(NOW, may_start=True)) == plan_summary(
        without.plan(NOW, may_start=True)
    )
