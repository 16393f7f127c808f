"""Backoff jitter draws from [0, 1), spread over the whole interval."""

from __future__ import annotations

from brupop.adapters.system.jitter import uniform


def test_draws_stay_in_the_unit_interval_and_spread_over_it() -> None:
    draws = [uniform() for _ in range(4000)]

    assert all(0.0 <= draw < 1.0 for draw in draws)
    assert {int(draw * 10) for draw in draws} == set(range(10))  # every tenth is reached
    assert len(set(draws)) == len(draws)
