"""A PodDisruptionBudget's counts, as numbers or percentages, scaled as Kubernetes scales them."""

from __future__ import annotations

import pytest

from brupop.domain.cluster.disruption_budget import allows_one_more_gone, int_or_percent, scaled


@pytest.mark.parametrize(
    ("value", "kept"),
    [(2, 2), (0, 0), ("50%", "50%"), ("100%", "100%"), ("101%", None), (-1, None), (True, None)],
)
def test_a_count_is_kept_only_when_it_is_a_number_or_a_percentage(
    value: object, kept: object
) -> None:
    assert int_or_percent(value) == kept


@pytest.mark.parametrize("value", ["50", "5 0%", "½%", "٣%", "50.5%", None, [], {}])
def test_anything_else_is_no_count(value: object) -> None:
    assert int_or_percent(value) is None


@pytest.mark.parametrize(
    ("count", "expected", "pods"),
    [("50%", 3, 2), ("25%", 3, 1), ("0%", 9, 0), ("100%", 4, 4), (2, 9, 2)],
)
def test_a_percentage_is_scaled_and_rounded_up(count: int | str, expected: int, pods: int) -> None:
    assert scaled(count, expected) == pods


def test_min_available_as_a_percentage_keeps_its_rounded_up_share_healthy() -> None:
    assert allows_one_more_gone("50%", None, selected=3, healthy=3)
    assert not allows_one_more_gone("50%", None, selected=3, healthy=2)
