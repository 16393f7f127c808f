"""The apiserver collects its youngest generation of cyclic garbage less often than Python's
default, keeping the older generations' ratios (a burst of answers makes garbage, few cycles)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from brupop.entrypoints.apiserver.main import YOUNG_COLLECTION_THRESHOLD, collect_less_often


@pytest.fixture
def thresholds_restored() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    yield before
    gc.set_threshold(*before)


def test_the_youngest_generation_is_collected_after_ten_thousand_allocations(
    thresholds_restored: tuple[int, int, int],
) -> None:
    _, middle, oldest = thresholds_restored

    collect_less_often()

    assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, middle, oldest)
    assert YOUNG_COLLECTION_THRESHOLD == 10_000
    assert gc.isenabled()
