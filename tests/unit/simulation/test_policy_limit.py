"""The limit simulate judges a run by is the one the controller applies: the --policy's
`maxConcurrent` (a count, or a percentage of the fleet rounded down, at least 1) when it has
one, --max-concurrent otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.simulation.flags.options import parse_options
from tests.support.policy_file import write_policy_file


@pytest.mark.parametrize(
    ("value", "nodes", "limit"),
    [("2", 6, 2), ('"50%"', 5, 2), ('"10%"', 5, 1), ('"100%"', 7, 7)],
)
def test_the_policys_max_concurrent_is_the_limit_in_force(
    tmp_path: Path, value: str, nodes: int, limit: int
) -> None:
    options = parse_options(
        ["--nodes", str(nodes), "--max-concurrent", "1",
         "--policy", write_policy_file(tmp_path, f"  maxConcurrent: {value}\n")]
    )  # fmt: skip

    assert options.limit_in_force == limit
    assert options.max_concurrent_label == str(limit)
    assert options.max_concurrent == 1  # still the controller's MAX_CONCURRENT_UPDATE


@pytest.mark.parametrize(("flag", "limit"), [("3", 3), ("unlimited", None)])
def test_without_a_policy_limit_max_concurrent_is_in_force(
    tmp_path: Path, flag: str, limit: int | None
) -> None:
    policy = write_policy_file(tmp_path, "  paused: false\n")
    options = parse_options(["--max-concurrent", flag, "--policy", policy])

    assert options.limit_in_force == limit
