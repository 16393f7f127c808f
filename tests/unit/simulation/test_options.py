"""`brupop simulate` flags: every number finite and bounded, the processes' own rules applied
to the flags that feed them, and a bad flag is one line naming it with exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from brupop.simulation.flags.options import OptionError, parse_options
from brupop.simulation.flags.timing import TIMING_FLAGS
from brupop.simulation.main import main

# --chaos-seed is left out: any integer 0..2**63 is a fine seed, 10**12 included.
UNUSABLE = ("inf", "-inf", "nan", "1e12", "1000000000000", "-1")
NUMERIC_FLAGS = sorted(
    [f"--{flag.name}" for flag in TIMING_FLAGS]
    + [
        "--nodes",
        "--max-concurrent",
        "--timeout",
        "--chaos-kills",
        "--restart-controller-after",
        "--controller-down-seconds",
        "--settle-seconds",
    ]
)


@pytest.mark.parametrize("value", UNUSABLE)
@pytest.mark.parametrize("flag", NUMERIC_FLAGS)
def test_an_unusable_number_is_refused_naming_its_flag(flag: str, value: str) -> None:
    with pytest.raises(OptionError, match=f"^{flag}: "):
        parse_options([f"{flag}={value}"])


@pytest.mark.parametrize(
    ("argv", "flag", "reason"),
    [
        (["--leader-lease", "1", "--leader-renew", "5"], "--leader-lease", "twice --leader-renew"),
        (["--leader-lease", "2.5"], "--leader-lease", "whole number"),
        (["--apiclient-retry-base", "3"], "--apiclient-retry-base", "--apiclient-retry-max"),
        (["--host-poll-interval", "9"], "--host-poll-interval", "--host-command-deadline"),
        (["--eviction-retry-interval", "20"], "--eviction-retry-interval", "--drain-timeout"),
        (["--restart-backoff", "5"], "--restart-backoff", "--restart-backoff-max"),
    ],
)
def test_a_rule_between_flags_is_checked_before_anything_starts(
    argv: list[str], flag: str, reason: str
) -> None:
    with pytest.raises(OptionError) as refused:
        parse_options(argv)

    assert str(refused.value).startswith(f"{flag}: ")
    assert reason in str(refused.value)


def test_a_lease_shorter_than_its_renewal_ends_with_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--leader-lease", "1", "--leader-renew", "5"]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("brupop simulate: --leader-lease: ")
    assert "Traceback" not in err


def test_the_flags_are_checked_without_the_shells_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TIMEOUT_IDLE_SECONDS", "inf")
    monkeypatch.setenv("MAX_CONCURRENT_UPDATE", "many")

    assert parse_options([]).timing["timeout-idle"] == 15.0


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("run.pdf", "must end in .svg or .png"),
        ("run", "must end in .svg or .png"),
        ("a-file/run.svg", "a-file is a file, not a directory"),
        ("a-directory.svg", "is a directory"),
    ],
)
def test_a_timeline_path_that_cannot_take_a_picture_stops_the_run_before_it_starts(
    name: str,
    reason: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = str(tmp_path)
    (tmp_path / "a-directory.svg").mkdir()
    (tmp_path / "a-file").write_text("not a directory\n")

    assert main(["--timeline", f"{base}/{name}"]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("brupop simulate: --timeline: ") and reason in err


def test_a_timeline_path_in_upper_case_is_kept_as_given(tmp_path: Path) -> None:
    path = f"{tmp_path}/Run.PNG"
    assert str(parse_options(["--timeline", path]).timeline) == path
