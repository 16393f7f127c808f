"""A work directory kept after a run holds what explains the run, and none of its secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.simulate_run import Simulate, explain


@pytest.mark.e2e
def test_a_kept_work_directory_has_no_key_and_no_token_left(
    simulate: Simulate, tmp_path: Path
) -> None:
    work = tmp_path / "work"

    run = simulate("--nodes", "2", "--timeout", "60", "--work-dir", str(work))

    assert run.returncode == 0, explain(run)
    assert (work / "tls" / "ca.crt").is_file()  # kept: the run's certificates and hosts
    assert sorted(p.name for p in (work / "nodes").iterdir()) == ["node-01", "node-02"]
    assert list(work.rglob("*.key")) == []
    assert list(work.rglob("token")) == []
