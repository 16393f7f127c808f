"""A simulate flag that has no effect without another is refused, one line saying what it
needs (exit 2), instead of a run that ends "OK" without the scenario it asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.simulation.main import EXIT_USAGE, main
from tests.support.policy_file import write_policy_file


def _refusal(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_unhealthy_without_a_policy_says_it_would_have_no_effect(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refusal(capsys, ["--unhealthy", "node-02"])

    assert err.startswith("brupop simulate: --unhealthy: has no effect without a health gate")
    assert "there is no --policy" in err and "healthGate" in err


def test_unhealthy_with_a_policy_without_a_health_gate_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write_policy_file(tmp_path, "  haltAfterFailures: 1\n")

    err = _refusal(capsys, ["--policy", policy, "--unhealthy", "node-02"])

    assert "the --policy has no spec.healthGate" in err


def test_a_chaos_seed_without_kills_says_it_needs_them(capsys: pytest.CaptureFixture[str]) -> None:
    err = _refusal(capsys, ["--chaos-seed", "7"])

    assert err.startswith("brupop simulate: --chaos-seed: has no effect without --chaos-kills")


def test_controller_down_seconds_without_a_restart_says_it_needs_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refusal(capsys, ["--controller-down-seconds", "2"])

    assert "has no effect without --restart-controller-after" in err


def test_a_bad_value_is_named_before_a_missing_companion(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _refusal(capsys, ["--unhealthy", "node-99"])

    assert "no node 'node-99'" in err
