"""The pause rule of the incremental decision: a paused fleet (`may_start` false) or a paused
node (held back by its Node label) starts nobody, nodes already outside Idle finish, and the
book still agrees with the full recomputation (`plan_rollout(held_back=...)`)."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.reason import Reason
from brupop.domain.reporting.waiting_reason import RolloutView, report
from brupop.domain.rollout.concurrency import ConcurrencyLimit
from brupop.domain.rollout.rollout import ChangeKind, RolloutRules, plan_rollout
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState as S
from brupop.domain.windows.maintenance_window import MaintenanceWindow
from tests.unit.domain.controller_shadows import NOW, ago, shadow
from tests.unit.domain.rollout.books import NODES, RULES, book_of, plan_summary, shadows

ALWAYS = MaintenanceWindow.starting("* * * * * * *", now=NOW)


def test_a_paused_fleet_starts_nobody_and_lets_the_node_in_flight_move_on() -> None:
    in_flight = shadow("a", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.STAGED_AND_PERFORMED_UPDATE)
    book = book_of(in_flight, shadow("b"), shadow("c"))

    plan = book.plan(NOW, may_start=False)

    assert plan.started() == ()
    assert [(c.shadow.name, c.kind, c.spec.state) for c in plan.changes] == [
        ("brs-a", ChangeKind.ADVANCE, S.REBOOTED_INTO_UPDATE)
    ]
    assert book.waiting == 2


def test_a_node_held_back_never_starts_while_the_others_do() -> None:
    book = book_of(shadow("a"), shadow("b"), shadow("c"))

    assert book.hold_back("brs-a", True) is True

    assert book.plan(NOW, may_start=True).started() == ("brs-b", "brs-c")
    assert book.ready_names() == ["brs-b", "brs-c"]
    assert book.held_back() == {"brs-a"}
    assert book.waiting == 3


def test_a_held_back_node_in_flight_still_finishes() -> None:
    in_flight = shadow("a", spec=S.MONITORING_UPDATE, state=S.MONITORING_UPDATE)
    book = book_of(in_flight)
    book.hold_back("brs-a", True)

    [change] = book.plan(NOW, may_start=True).changes

    assert (change.kind, change.spec.state) == (ChangeKind.ADVANCE, S.IDLE)


def test_letting_a_node_go_makes_it_start_on_the_next_plan() -> None:
    book = book_of(shadow("a"))
    book.hold_back("brs-a", True)
    assert book.plan(NOW, may_start=True).started() == ()

    assert book.hold_back("brs-a", False) is True

    assert book.plan(NOW, may_start=True).started() == ("brs-a",)


def test_holding_back_twice_changes_nothing_the_second_time() -> None:
    book = book_of(shadow("a"))
    assert book.hold_back("brs-a", True) is True
    assert book.hold_back("brs-a", True) is False
    assert book.hold_back("brs-b", False) is False


def test_a_held_back_node_stays_held_back_when_its_shadow_changes() -> None:
    book = book_of(shadow("a"))
    book.hold_back("brs-a", True)

    book.record(shadow("a", crashes=1, failed_at=ago(3600), rv="2"), NOW)

    assert book.ready_names() == []
    book.drop("brs-a")
    assert book.held_back() == frozenset()


# --- the reason a paused node gives ---------------------------------------------------------


def _view(**changes: object) -> RolloutView:
    fields: dict[str, object] = {"now": NOW, "rollout_rules": RULES, "window": ALWAYS}
    fields.update({"window_open": True, **changes})
    return RolloutView(**fields)  # type: ignore[arg-type]


def test_a_waiting_node_of_a_paused_fleet_says_paused() -> None:
    [row] = report([shadow("n")], _view(paused=True))
    assert row.reason is Reason.PAUSED
    assert row.detail == "fleet paused (spec.paused of the update policy); 1.20.0 offered"
    assert row.reason.is_waiting


def test_a_node_with_the_pause_label_says_paused_and_names_the_label() -> None:
    [row] = report([shadow("n")], _view(held_back=frozenset({"brs-n"})))
    assert row.reason is Reason.PAUSED
    assert row.detail == "node paused (label brupop.bottlerocket.aws/paused=true); 1.20.0 offered"


def test_a_node_in_flight_of_a_paused_fleet_says_updating() -> None:
    busy = shadow("n", spec=S.STAGED_AND_PERFORMED_UPDATE, state=S.IDLE, stamped=NOW)
    [row] = report([busy], _view(paused=True))
    assert row.reason is Reason.UPDATING


def test_a_paused_node_with_nothing_to_do_says_so_rather_than_paused() -> None:
    [row] = report([shadow("n", target="1.19.0")], _view(paused=True))
    assert row.reason is Reason.NO_UPDATE


# --- the book against the full recomputation, pauses included -------------------------------

steps = st.lists(
    st.one_of(
        st.tuples(st.just("change"), st.sampled_from(NODES).flatmap(shadows)),
        st.tuples(st.just("drop"), st.sampled_from(NODES)),
        st.tuples(st.just("wait"), st.integers(min_value=1, max_value=400)),
        st.tuples(st.just("pause"), st.tuples(st.sampled_from(NODES), st.booleans())),
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(steps=steps, fleet_paused=st.booleans())
def test_with_pauses_the_book_plans_what_a_full_recomputation_plans(
    steps: list[tuple[str, object]], fleet_paused: bool
) -> None:
    book = RolloutBook(RULES)
    fleet: dict[str, Shadow] = {}
    paused: set[str] = set()
    now = NOW
    for kind, value in steps:
        if kind == "change":
            assert isinstance(value, Shadow)
            fleet[value.name] = value
            book.record(value, now)
            book.hold_back(value.name, value.name in paused)  # as the mirror does on a change
        elif kind == "drop":
            name = f"brs-{value}"
            fleet.pop(name, None)
            paused.discard(name)
            book.drop(name)
        elif kind == "pause":
            assert isinstance(value, tuple)
            name = f"brs-{value[0]}"
            if name in fleet:
                (paused.add if value[1] else paused.discard)(name)
                book.hold_back(name, value[1])
        else:
            assert isinstance(value, int)
            now += timedelta(seconds=value)
        book.redecide(book.due(now), now)
        full = plan_rollout(
            fleet.values(), now, RULES, may_start=not fleet_paused, held_back=frozenset(paused)
        )
        incremental = book.plan(now, may_start=not fleet_paused)
        assert plan_summary(incremental) == plan_summary(full)
        assert incremental.slots_held == full.slots_held
        assert book.ready_names() == [s.name for s in full.ready]
        assert not any(c.kind is ChangeKind.START and c.shadow.name in paused for c in full.changes)
        if fleet_paused:
            assert incremental.started() == ()


def test_a_full_recomputation_never_starts_a_held_back_node() -> None:
    rules = RolloutRules(ConcurrencyLimit(None))
    plan = plan_rollout(
        [shadow("a"), shadow("b")], NOW, rules, may_start=True, held_back=frozenset({"brs-a"})
    )
    assert plan.started() == ("brs-b",)
