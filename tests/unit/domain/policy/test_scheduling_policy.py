"""The scheduling sections of the update policy: what they accept, refuse and mean."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from brupop.domain.policy.effective_policy import ENVIRONMENT_POLICY, policy_from_spec
from brupop.domain.policy.scheduling_policy import (
    DEFAULT_SCHEDULING,
    Blackout,
    StartOrder,
    concurrency_limit,
)
from brupop.domain.policy.update_policy import UpdatePolicySpec


@pytest.mark.parametrize(
    ("value", "nodes", "allowed"),
    [(3, 100, 3), ("10%", 100, 10), ("10%", 19, 1), ("10%", 5, 1), ("100%", 7, 7), ("50%", 9, 4)],
)
def test_a_percentage_is_rounded_down_but_allows_at_least_one_node(
    value: int | str, nodes: int, allowed: int
) -> None:
    assert concurrency_limit(value, nodes) == allowed


def test_a_blackout_needs_a_time_zone_in_its_timestamps() -> None:
    with pytest.raises(ValidationError, match="timezone"):
        Blackout.model_validate({"start": "2026-12-20T00:00:00", "end": "2026-12-21T00:00:00Z"})


def test_a_blackout_timestamp_must_be_rfc3339() -> None:
    with pytest.raises(ValidationError, match=r"start"):
        Blackout.model_validate({"start": "tomorrow", "end": "2026-12-21T00:00:00Z"})


def test_without_a_policy_object_only_the_start_order_differs_from_the_original() -> None:
    scheduling = ENVIRONMENT_POLICY.scheduling
    assert scheduling is DEFAULT_SCHEDULING
    assert scheduling.order is StartOrder.CHEAPEST_FIRST
    assert (scheduling.finish_by, scheduling.capacity_check) == (False, False)
    assert scheduling.max_concurrent is None and scheduling.budgets == ()


def test_an_empty_policy_turns_finish_by_and_the_capacity_check_on() -> None:
    scheduling = policy_from_spec(UpdatePolicySpec()).scheduling
    assert (scheduling.finish_by, scheduling.capacity_check) == (True, True)
    assert scheduling.order is StartOrder.CHEAPEST_FIRST


def test_the_policy_in_force_carries_every_scheduling_field_of_the_spec() -> None:
    spec = UpdatePolicySpec.model_validate(
        {
            "maxConcurrent": "25%",
            "budgets": [{"groupBy": "topology.kubernetes.io/zone", "maxConcurrent": 1}],
            "windows": [{"cron": "* * 2-4 * * * *", "timeZone": "America/New_York"}],
            "finishBy": False,
            "version": {"pin": "1.20.1", "minReleaseAgeHours": 24},
            "minNodeAgeSeconds": 600,
            "blockingPodSelector": "app=batch",
            "order": "name",
            "capacityCheck": False,
            "drain": {"onTimeout": "force", "forceNamespaces": ["batch"]},
        }
    )
    scheduling = policy_from_spec(spec).scheduling
    assert scheduling.max_concurrent == "25%"
    assert scheduling.budgets[0].group_by == "topology.kubernetes.io/zone"
    assert scheduling.windows[0].time_zone == "America/New_York"
    assert scheduling.version is not None and scheduling.version.pin == "1.20.1"
    assert (scheduling.min_node_age_seconds, scheduling.blocking_pod_selector) == (600, "app=batch")
    assert (scheduling.order, scheduling.capacity_check, scheduling.finish_by) == (
        StartOrder.NAME,
        False,
        False,
    )
    assert scheduling.drain is not None and scheduling.drain.force_namespaces == ("batch",)
