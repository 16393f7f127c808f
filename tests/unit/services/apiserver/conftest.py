"""Fixtures of the apiserver's drain tests: a stepping clock and the two-node cluster on it.
A test module that needs another cluster defines its own `cluster` (and `clock`)."""

from __future__ import annotations

import pytest

from brupop.adapters.memory.cluster import InMemoryCluster
from tests.unit.services.apiserver.drain_fakes import SteppingClock, two_node_cluster


@pytest.fixture
def clock() -> SteppingClock:
    return SteppingClock()


@pytest.fixture
def cluster(clock: SteppingClock) -> InMemoryCluster:
    return two_node_cluster(clock)
