"""Which Events the update policy's changes give: deletion, an unusable object, ignored names."""

from __future__ import annotations

from brupop.domain.cluster.objects import EventSubject, EventType
from brupop.domain.policy.effective_policy import ENVIRONMENT_POLICY, resolve_policy
from brupop.domain.policy.policy_events import (
    POLICY_DELETED,
    POLICY_IGNORED,
    POLICY_INVALID,
    ignored_policy_events,
    policy_change_event,
)
from brupop.domain.policy.policy_object import UpdatePolicy
from brupop.domain.policy.update_policy import UpdatePolicySpec

NS = "brupop-bottlerocket-aws"
GOOD = UpdatePolicy("default", NS, UpdatePolicySpec(paused=True), generation=1)
BAD = UpdatePolicy("default", NS, None, problem="spec.canary.selector: unbalanced")


def test_deleting_a_policy_in_force_returns_to_the_defaults_with_a_normal_event() -> None:
    before = resolve_policy(GOOD)
    after = resolve_policy(None, before)

    event = policy_change_event(before, after, NS)

    assert event is not None
    assert (event.shadow_name, event.namespace, event.subject) == (
        "default",
        NS,
        EventSubject.UPDATE_POLICY,
    )
    assert (event.reason, event.type) == (POLICY_DELETED, EventType.NORMAL)
    assert "back to the defaults" in event.message


def test_deleting_an_unusable_policy_also_says_it_is_gone() -> None:
    before = resolve_policy(BAD)
    event = policy_change_event(before, resolve_policy(None, before), NS)
    assert event is not None and event.reason == POLICY_DELETED


def test_no_policy_before_or_after_and_an_unchanged_policy_give_no_event() -> None:
    assert policy_change_event(ENVIRONMENT_POLICY, ENVIRONMENT_POLICY, NS) is None
    good = resolve_policy(GOOD)
    assert policy_change_event(good, resolve_policy(GOOD, good), NS) is None
    assert policy_change_event(ENVIRONMENT_POLICY, good, NS) is None


def test_an_unusable_policy_warns_once_with_its_reason_and_what_stays_in_force() -> None:
    good = resolve_policy(GOOD)
    bad = resolve_policy(BAD, good)

    event = policy_change_event(good, bad, NS)

    assert event is not None and (event.reason, event.type) == (POLICY_INVALID, EventType.WARNING)
    assert "spec.canary.selector: unbalanced" in event.message
    assert "the last good policy stays in force" in event.message
    assert policy_change_event(bad, resolve_policy(BAD, bad), NS) is None
    first = resolve_policy(BAD)
    event = policy_change_event(ENVIRONMENT_POLICY, first, NS)
    assert event is not None and "the defaults stay in force" in event.message


def test_each_ignored_policy_is_warned_about_once() -> None:
    events = ignored_policy_events(("staging", "canaries"), ("staging",), NS)
    assert [(e.shadow_name, e.reason, e.type, e.subject) for e in events] == [
        ("canaries", POLICY_IGNORED, EventType.WARNING, EventSubject.UPDATE_POLICY)
    ]
    assert "'default'" in events[0].message
