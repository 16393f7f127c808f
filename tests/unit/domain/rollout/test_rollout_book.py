"""RolloutBook: decisions kept per changed shadow agree with the full recomputation
(`plan_rollout`), and time alone (a backoff ending, a deadline passing) changes them."""

from __future__ import annotations

from datetime import timedelta
from functools import cmp_to_key

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.rollout.rollout import ChangeKind, plan_rollout
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState as S
from brupop.domain.versions import compare_versions, is_version
from tests.unit.domain.controller_shadows import NEW, NOW, OLD, ago, shadow
from tests.unit.domain.rollout.books import NODES, RULES, book_of, plan_summary, shadows


def test_a_backoff_that_ends_with_no_event_makes_the_node_start() -> None:
    failed = shadow("n", crashes=1, failed_at=NOW)  # may retry after 2 + 1 minutes
    book = book_of(failed)
    assert book.plan(NOW, may_start=True).changes == ()
    later = NOW + timedelta(minutes=3)

    assert book.redecide(book.due(later), later) == [failed.name]

    assert book.plan(later, may_start=True).started() == (failed.name,)


def test_a_timeout_with_no_event_is_still_enforced() -> None:
    stuck = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, stamped=NOW)
    book = book_of(stuck)
    assert book.plan(NOW, may_start=True).changes == ()
    later = NOW + timedelta(seconds=41)

    book.redecide(book.due(later), later)

    [change] = book.plan(later, may_start=True).changes
    assert (change.kind, change.spec.state, change.spec.version) == (
        ChangeKind.TIMEOUT,
        S.IDLE,
        NEW,
    )


def test_a_decision_replaced_before_its_deadline_is_not_due_at_the_old_one() -> None:
    stuck = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, stamped=NOW)
    book = book_of(stuck)
    book.record(
        shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE), NOW
    )
    assert book.due(NOW + timedelta(hours=1)) == []


def test_counts_follow_every_change_and_removal() -> None:
    book = book_of(shadow("a"), shadow("b", current=NEW))
    assert (dict(book.states), dict(book.versions)) == ({"Idle": 2}, {OLD: 1, NEW: 1})
    book.record(shadow("a", state=S.STAGED_AND_PERFORMED_UPDATE), NOW)
    book.drop("brs-b")
    assert (dict(book.states), dict(book.versions)) == ({"StagedAndPerformedUpdate": 1}, {OLD: 1})


def test_the_ready_order_puts_fewer_crashes_first_and_the_controller_node_last() -> None:
    book = book_of(
        shadow("node-1"), shadow("node-3", crashes=1, failed_at=ago(600)), shadow("node-2")
    )
    assert book.ready_names() == ["brs-node-2", "brs-node-3", "brs-node-1"]


# --- equivalence with the full recomputation ---------------------------------------------

steps = st.lists(
    st.one_of(
        st.tuples(st.just("change"), st.sampled_from(NODES).flatmap(shadows)),
        st.tuples(st.just("drop"), st.sampled_from(NODES)),
        st.tuples(st.just("wait"), st.integers(min_value=1, max_value=400)),
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(steps=steps, may_start=st.booleans())
def test_the_book_plans_what_a_full_recomputation_plans(
    steps: list[tuple[str, object]], may_start: bool
) -> None:
    book = RolloutBook(RULES)
    fleet: dict[str, Shadow] = {}
    now = NOW
    for kind, value in steps:
        if kind == "change":
            assert isinstance(value, Shadow)
            fleet[value.name] = value
            book.record(value, now)
        elif kind == "drop":
            name = f"brs-{value}"
            fleet.pop(name, None)
            book.drop(name)
        else:
            assert isinstance(value, int)
            now += timedelta(seconds=value)
        book.redecide(book.due(now), now)
        full = plan_rollout(fleet.values(), now, RULES, may_start=may_start)
        incremental = book.plan(now, may_start=may_start)
        assert plan_summary(incremental) == plan_summary(full)
        assert incremental.started() == full.started()
        assert incremental.slots_held == full.slots_held
        assert book.ready_names() == [s.name for s in full.ready]


def test_a_withheld_change_waits_and_the_others_are_written() -> None:
    gated = shadow("a", spec=S.MONITORING_UPDATE, state=S.MONITORING_UPDATE, current=NEW)
    moving = shadow("b", spec=S.REBOOTED_INTO_UPDATE, state=S.REBOOTED_INTO_UPDATE, current=NEW)
    book = book_of(gated, moving)

    plan = book.plan(NOW, may_start=True, withheld={gated.name})

    assert [c.shadow.name for c in plan.changes] == [moving.name]
    assert [c.shadow.name for c in book.plan(NOW, may_start=True).changes] == sorted(
        [gated.name, moving.name]
    )


def test_only_the_named_ready_nodes_start_in_start_order_within_the_free_slots() -> None:
    book = book_of(*(shadow(f"node-{i}") for i in range(2, 7)))
    names = {f"brs-node-{i}" for i in (6, 3, 5)}

    assert book.plan(NOW, may_start=True, only=names).started() == ("brs-node-3", "brs-node-5")
    assert book.plan(NOW, may_start=True, only=set()).started() == ()


def test_the_offered_versions_are_counted_as_shadows_change() -> None:
    book = book_of(shadow("a", target="1.20.10"), shadow("b", target="1.20.9"))
    assert book.targets == {"1.20.10": 1, "1.20.9": 1}

    book.record(shadow("a", target="1.20.9", rv="2"), NOW)
    book.drop("brs-b")

    assert book.targets == {"1.20.9": 1}


def _oracle_newest(shadows: list[Shadow]) -> dict[str, str]:
    """The newest version per variant read from every shadow at once (a scan of the fleet)."""
    seen: dict[str, list[str]] = {}
    for one in shadows:
        status = one.status
        if status is not None and (variant := status.variant):
            versions = (status.current_version, status.target_version)
            seen.setdefault(variant, []).extend(v for v in versions if is_version(v))
    return {
        variant: max(versions, key=cmp_to_key(compare_versions))
        for variant, versions in seen.items()
        if versions
    }


VARIANT_CHANGES = st.lists(
    st.tuples(
        st.sampled_from("abcd"),  # node
        st.sampled_from([None, "", "aws-k8s-1.29", "aws-k8s-1.30"]),  # variant (None: dropped)
        st.sampled_from([OLD, NEW, "1.21.0", "not-a-version"]),  # current version
        st.sampled_from([OLD, NEW, "1.21.0"]),  # offered version
    ),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(VARIANT_CHANGES)
def test_the_newest_version_per_variant_follows_every_change_as_a_full_scan_reads_it(
    changes: list[tuple[str, str | None, str, str]],
) -> None:
    book = RolloutBook(RULES)
    for node, variant, current, target in changes:
        if variant is None:
            book.drop(f"brs-{node}")
            continue
        made = shadow(node, current=OLD, target=target)
        assert made.status is not None
        status = made.status.model_copy(update={"variant": variant, "current_version": current})
        book.record(made.model_copy(update={"status": status}), NOW)

    held = [s for n in book.names() if (s := book.shadow(n)) is not None]
    assert book.variant_versions.newest() == _oracle_newest(held)
