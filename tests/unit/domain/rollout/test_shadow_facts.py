"""ShadowFacts: the facts a decision reads, taken once per change, say what the shadow's model
says, and the book decides from the facts of the shadow it last recorded."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings

from brupop.domain.rollout.backoff import retry_allowed_at
from brupop.domain.rollout.rollout_book import RolloutBook
from brupop.domain.rollout.shadow_facts import ShadowFacts
from brupop.domain.rollout.transition_timeout import transition_deadline
from brupop.domain.shadow import Shadow
from brupop.domain.states import UpdateState as S
from brupop.domain.versions import versions_differ
from tests.unit.domain.controller_shadows import NEW, NOW, OLD, shadow
from tests.unit.domain.rollout.books import RULES, TIMEOUTS, shadows


@settings(max_examples=200, deadline=None)
@given(one=shadows("node-3"))
def test_the_facts_say_what_the_model_says(one: Shadow) -> None:
    facts = ShadowFacts.of(one, TIMEOUTS)
    status, spec = one.status, one.spec

    assert (facts.name, facts.node_name) == (one.name, one.node_name)
    assert (facts.spec_state, facts.spec_version) == (spec.state, spec.version)
    assert facts.deadline == transition_deadline(one, TIMEOUTS)
    assert facts.spec_clear == (spec == type(spec)())
    if status is None:
        assert (facts.current_state, facts.allowed_at, facts.offered) == (None, None, False)
        assert facts.holds_slot == (spec.state is not S.IDLE)
        return
    assert facts.current_state is status.current_state
    assert (facts.current_version, facts.target_version) == (
        status.current_version,
        status.target_version,
    )
    assert (facts.crash_count, facts.allowed_at) == (status.crash_count, retry_allowed_at(status))
    assert facts.offered == versions_differ(status.current_version, status.target_version)
    assert facts.holds_slot == (spec.state is not S.IDLE or status.current_state is not S.IDLE)


def test_the_book_keeps_the_facts_of_the_shadow_it_last_recorded() -> None:
    book = RolloutBook(RULES)
    book.record(shadow("a", current=OLD), NOW)
    updated = shadow("a", current=NEW, rv="2")

    book.record(updated, NOW)

    assert book.facts("brs-a") == ShadowFacts.of(updated, TIMEOUTS)
    book.drop("brs-a")
    assert book.facts("brs-a") is None


def test_a_transition_deadline_is_taken_with_the_books_timeouts() -> None:
    stamped = shadow("a", spec=S.STAGED_AND_PERFORMED_UPDATE, stamped=NOW)
    book = RolloutBook(RULES)

    book.record(stamped, NOW)

    facts = book.facts("brs-a")
    assert facts is not None
    assert facts.deadline == NOW + timedelta(seconds=TIMEOUTS.staged_and_performed_update or 0)
