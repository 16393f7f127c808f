"""ShadowStore behaviour, the same for the agent's fake and for the HTTPS client."""

from __future__ import annotations

import pytest

from brupop.domain.host.agent_shadow import AgentShadowSpec, AgentShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import NotFoundError
from tests.contract.agent.conftest import NODE, AgentSide

STATUS = AgentShadowStatus(
    current_version="1.19.0", target_version="1.19.0", current_state=UpdateState.IDLE
)
# Long enough that an answer "at once" cannot be mistaken for one at the timeout.
LONG_WAIT = 30.0
SHORT_WAIT = 0.5  # a binary fraction: fake-clock sums stay exact


def test_a_node_without_a_shadow_reads_none(side: AgentSide) -> None:
    assert side.store.get() is None


def test_create_makes_an_idle_shadow_of_this_node(side: AgentSide) -> None:
    created = side.store.create()

    assert (created.name, created.node_name, created.node_uid) == (f"brs-{NODE}", NODE, "uid-n1")
    assert created.spec == AgentShadowSpec()
    assert created.status is None
    assert side.store.get() == created


def test_create_on_an_existing_shadow_returns_the_stored_one(side: AgentSide) -> None:
    side.store.create()
    side.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.20.0")
    stored = side.store.get()

    assert side.store.create() == stored


def test_status_is_stored_with_a_new_resource_version(side: AgentSide) -> None:
    created = side.store.create()

    reported = side.store.update_status(STATUS)

    assert reported.status == STATUS
    assert reported.spec == created.spec
    assert reported.resource_version != created.resource_version
    assert side.store.get() == reported


def test_status_for_a_missing_shadow_is_not_found(side: AgentSide) -> None:
    with pytest.raises(NotFoundError):
        side.store.update_status(STATUS)


def test_long_poll_on_an_unchanged_shadow_answers_it_at_the_timeout(side: AgentSide) -> None:
    created = side.store.create()
    started = side.now()

    answer = side.store.wait_for_change(created.resource_version, SHORT_WAIT)

    assert answer == created
    assert side.now() - started >= SHORT_WAIT


def test_long_poll_answers_a_spec_change_before_the_timeout(side: AgentSide) -> None:
    created = side.store.create()
    side.during_next_wait(lambda: side.set_spec(UpdateState.STAGED_AND_PERFORMED_UPDATE, "1.2.0"))
    started = side.now()

    answer = side.store.wait_for_change(created.resource_version, LONG_WAIT)

    assert answer is not None
    assert answer.spec == AgentShadowSpec(
        state=UpdateState.STAGED_AND_PERFORMED_UPDATE, version="1.2.0"
    )
    assert side.now() - started < LONG_WAIT


def test_long_poll_from_an_older_version_answers_the_current_shadow_at_once(
    side: AgentSide,
) -> None:
    created = side.store.create()
    reported = side.store.update_status(STATUS)
    started = side.now()

    answer = side.store.wait_for_change(created.resource_version, LONG_WAIT)

    assert answer == reported
    assert side.now() - started < LONG_WAIT


def test_long_poll_without_a_version_answers_an_existing_shadow_at_once(side: AgentSide) -> None:
    created = side.store.create()
    started = side.now()

    assert side.store.wait_for_change(None, LONG_WAIT) == created
    assert side.now() - started < LONG_WAIT


def test_long_poll_on_a_missing_shadow_waits_for_the_timeout_then_answers_none(
    side: AgentSide,
) -> None:
    started = side.now()

    assert side.store.wait_for_change(None, SHORT_WAIT) is None
    assert side.now() - started >= SHORT_WAIT


def test_long_poll_on_a_missing_shadow_answers_it_once_created(side: AgentSide) -> None:
    side.during_next_wait(side.create_shadow)
    started = side.now()

    answer = side.store.wait_for_change(None, LONG_WAIT)

    assert answer is not None and answer.node_name == NODE
    assert side.now() - started < LONG_WAIT
