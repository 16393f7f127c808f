"""Backoff: the one formula of every retry and restart, doubling to a cap, with full jitter."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brupop.domain.retry_backoff import Backoff

TEN_TO_SIXTY = Backoff(first_seconds=10.0, cap_seconds=60.0)


@pytest.mark.parametrize(
    ("failures", "ceiling"), [(1, 10.0), (2, 20.0), (3, 40.0), (4, 60.0), (2000, 60.0)]
)
def test_the_wait_doubles_from_the_first_up_to_the_cap(failures: int, ceiling: float) -> None:
    assert TEN_TO_SIXTY.delay(failures) == ceiling


def test_no_failure_yet_waits_as_the_first() -> None:
    assert TEN_TO_SIXTY.delay(0) == TEN_TO_SIXTY.delay(-3) == 10.0


@pytest.mark.parametrize("failures", [1, 2, 3, 4, 2000])
def test_full_jitter_draws_a_wait_between_nothing_and_the_ceiling(failures: int) -> None:
    ceiling = TEN_TO_SIXTY.ceiling(failures)

    assert TEN_TO_SIXTY.delay(failures, draw=lambda: 0.0) == 0.0
    assert TEN_TO_SIXTY.delay(failures, draw=lambda: 0.5) == ceiling / 2
    assert TEN_TO_SIXTY.delay(failures, draw=lambda: 1.0) == ceiling


@given(
    first=st.floats(0.001, 1e6),
    cap=st.floats(0.001, 1e9),
    failures=st.integers(-(10**6), 10**12),
    draw=st.floats(0.0, 1.0, exclude_max=True),
)
def test_any_count_gives_a_finite_wait_at_most_the_cap(
    first: float, cap: float, failures: int, draw: float
) -> None:
    backoff = Backoff(first, cap)

    waited = backoff.delay(failures, draw=lambda: draw)

    assert math.isfinite(waited) and 0.0 <= waited <= backoff.ceiling(failures) <= cap
