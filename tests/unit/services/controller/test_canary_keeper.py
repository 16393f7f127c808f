"""The canary keeper across a rollout whose record is begun again: a pass with no target (no
shadow offered anything for a moment, as after a relist) makes the keeper choose again from the
canaries the policy's status keeps. A canary that had already finished must still count, or the
others wait for it forever."""

from __future__ import annotations

from datetime import timedelta

from brupop.adapters.memory.nodes import InMemoryNodeRepository
from brupop.adapters.memory.store import Revisions
from brupop.domain.policy.update_policy import CanarySpec
from brupop.domain.policy.update_policy_status import CanaryProgress, UpdatePolicyStatus
from brupop.domain.states import UpdateState
from brupop.services.controller.safety.canary_keeper import CanaryKeeper
from tests.unit.domain.controller_shadows import NEW, NOW, OLD, shadow
from tests.unit.domain.rollout.books import book_of

CANARY = CanarySpec(count=2, soak_seconds=5)
NODES = ("node-0", "node-1", "node-2", "node-3")


def _keeper() -> CanaryKeeper:
    return CanaryKeeper(InMemoryNodeRepository(Revisions()))


def _kept(*nodes: str) -> UpdatePolicyStatus:
    return UpdatePolicyStatus(canary=CanaryProgress(nodes=len(nodes), version=NEW, chosen=nodes))


def test_a_canary_finished_before_the_rollout_is_begun_again_still_counts() -> None:
    keeper = _keeper()
    start = book_of(*(shadow(n) for n in NODES))
    chosen, _ = keeper.facts(CANARY, start, [], NEW, frozenset(), NOW)
    assert chosen is not None and len(chosen) == 2
    first, second = sorted(chosen)
    first_node, second_node = first.removeprefix("brs-"), second.removeprefix("brs-")
    keeper.follow_status(_kept(first_node, second_node))
    others = [n for n in NODES if n not in (first_node, second_node)]

    one_done = book_of(
        shadow(first_node, current=NEW),
        shadow(
            second_node, spec=UpdateState.REBOOTED_INTO_UPDATE, state=UpdateState.MONITORING_UPDATE
        ),
        *(shadow(n) for n in others),
    )
    _, soak = keeper.facts(CANARY, one_done, [first], NEW, frozenset(), NOW)
    assert soak is not None and soak.updated == 1

    keeper.facts(CANARY, one_done, [], None, frozenset(), NOW + timedelta(seconds=1))

    both_done = book_of(
        shadow(first_node, current=NEW),
        shadow(second_node, current=NEW),
        *(shadow(n) for n in others),
    )
    later = NOW + timedelta(seconds=2)
    _, soak = keeper.facts(CANARY, both_done, [second], NEW, frozenset(), later)
    assert soak is not None
    assert (soak.canaries, soak.updated) == (2, 2), soak
    assert soak.all_updated


def test_a_canary_finished_before_the_record_is_begun_again_keeps_its_soak_time() -> None:
    keeper = _keeper()
    start = book_of(*(shadow(n) for n in NODES))
    chosen, _ = keeper.facts(CANARY, start, [], NEW, frozenset(), NOW)
    assert chosen is not None
    nodes = sorted(n.removeprefix("brs-") for n in chosen)
    keeper.follow_status(_kept(*nodes))
    done = book_of(
        *(shadow(n, current=NEW) for n in nodes), *(shadow(n) for n in NODES if n not in nodes)
    )
    keeper.facts(CANARY, done, [f"brs-{n}" for n in nodes], NEW, frozenset(), NOW)

    keeper.facts(CANARY, done, [], None, frozenset(), NOW + timedelta(seconds=3))
    _, soak = keeper.facts(CANARY, done, [], NEW, frozenset(), NOW + timedelta(seconds=4))

    assert soak is not None
    assert soak.ends_at == NOW + timedelta(seconds=CANARY.soak_seconds), soak
    assert soak.done is False
    _, soak = keeper.facts(CANARY, done, [], NEW, frozenset(), NOW + timedelta(seconds=5))
    assert soak is not None and soak.done


def test_finishes_on_one_target_are_not_carried_to_a_newer_one() -> None:
    keeper = _keeper()
    start = book_of(*(shadow(n, current=OLD) for n in NODES))
    chosen, _ = keeper.facts(CANARY, start, [], NEW, frozenset(), NOW)
    assert chosen is not None
    nodes = sorted(n.removeprefix("brs-") for n in chosen)
    done = book_of(
        *(shadow(n, current=NEW) for n in nodes), *(shadow(n) for n in NODES if n not in nodes)
    )
    keeper.facts(CANARY, done, [f"brs-{n}" for n in nodes], NEW, frozenset(), NOW)

    _, soak = keeper.facts(CANARY, done, [], "1.21.0", frozenset(), NOW + timedelta(seconds=1))

    assert soak is not None and soak.updated == 0, soak


def test_a_canary_seen_idle_while_counted_failed_finishes_in_a_later_untouched_pass() -> None:
    keeper = _keeper()
    start = book_of(*(shadow(n) for n in NODES))
    chosen, _ = keeper.facts(CANARY, start, [], NEW, frozenset(), NOW)
    assert chosen is not None
    nodes = sorted(n.removeprefix("brs-") for n in chosen)
    done = book_of(
        *(shadow(n, current=NEW) for n in nodes), *(shadow(n) for n in NODES if n not in nodes)
    )
    touched = [f"brs-{n}" for n in nodes]
    _, soak = keeper.facts(CANARY, done, touched, NEW, frozenset({nodes[0]}), NOW)
    assert soak is not None and soak.updated == 1

    _, soak = keeper.facts(CANARY, done, [], NEW, frozenset(), NOW + timedelta(seconds=1))

    assert soak is not None and (soak.canaries, soak.updated) == (2, 2), soak
    assert soak.all_updated
