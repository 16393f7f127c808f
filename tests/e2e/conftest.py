"""The end-to-end tier's fixture: write a policy, run `brupop simulate`, read what it left."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.simulate_run import Simulate


@pytest.fixture
def simulate(tmp_path: Path) -> Simulate:
    """`simulate(*flags, policy=SPEC)` runs in the test's own `tmp_path`."""
    return Simulate(tmp_path)
