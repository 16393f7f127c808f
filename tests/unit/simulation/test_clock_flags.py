"""`brupop simulate --start-at` and `--clock-rate`: a time read in the policy's first window's
zone (UTC without one), a rate of at least 1, and one line naming the flag with exit code 2 for
a value simulate cannot use."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from brupop.simulation.flags.options import OptionError, parse_options
from brupop.simulation.main import main
from tests.support.kubeconfig import write_kubeconfig
from tests.support.policy_file import write_policy_file

PARIS_WINDOW = '  windows:\n    - cron: "* * 2-4 * * Mon-Fri *"\n      timeZone: Europe/Paris\n'


def test_without_the_clock_flags_the_run_keeps_the_machines_clock() -> None:
    clock = parse_options([]).clock

    assert clock.start_at is None
    assert clock.rate == 1
    assert not clock.shifted


def test_a_start_without_an_offset_is_read_in_utc_without_a_policy() -> None:
    clock = parse_options(["--start-at", "2026-12-07T01:30"]).clock

    assert clock.start_at == datetime(2026, 12, 7, 1, 30, tzinfo=UTC)
    assert clock.zone == "UTC"
    assert clock.shifted


def test_a_start_without_an_offset_is_read_in_the_policys_first_window_zone(
    tmp_path: Path,
) -> None:
    policy = write_policy_file(tmp_path, PARIS_WINDOW)

    clock = parse_options(["--policy", policy, "--start-at", "2026-12-07T01:30"]).clock

    assert clock.start_at == datetime(2026, 12, 7, 1, 30, tzinfo=ZoneInfo("Europe/Paris"))
    assert clock.start_at == datetime(2026, 12, 7, 0, 30, tzinfo=UTC)
    assert clock.zone == "Europe/Paris"


def test_a_start_with_an_offset_keeps_its_offset_whatever_the_policy(tmp_path: Path) -> None:
    policy = write_policy_file(tmp_path, PARIS_WINDOW)

    clock = parse_options(["--policy", policy, "--start-at", "2026-12-07T01:30Z"]).clock

    assert clock.start_at == datetime(2026, 12, 7, 1, 30, tzinfo=UTC)


def test_a_policy_without_windows_reads_the_start_in_utc(tmp_path: Path) -> None:
    policy = write_policy_file(tmp_path, "  paused: false\n")

    clock = parse_options(["--policy", policy, "--start-at", "2026-12-07T01:30"]).clock

    assert clock.zone == "UTC"


def test_a_rate_alone_speeds_the_clock_from_now() -> None:
    clock = parse_options(["--clock-rate", "3600"]).clock

    assert clock.rate == 3600
    assert clock.start_at is None
    assert clock.shifted


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--start-at", "monday"], "--start-at: 'monday' is not an ISO 8601 time"),
        (["--start-at", "2026-13-01"], "--start-at: '2026-13-01' is not an ISO 8601 time"),
        (["--start-at", "1969-07-20T20:17Z"], "--start-at: 1969-07-20T20:17Z is outside"),
        (["--start-at", "9999-12-31T00:00Z"], "--start-at: 9999-12-31T00:00Z is outside"),
        (["--clock-rate", "fast"], "--clock-rate: 'fast' is not a number"),
        (["--clock-rate", "nan"], "--clock-rate: 'nan' is not a finite number"),
        (["--clock-rate", "inf"], "--clock-rate: 'inf' is not a finite number"),
        (["--clock-rate", "0.5"], "--clock-rate: 0.5 is below 1"),
        (["--clock-rate", "-3"], "--clock-rate: -3 is below 1"),
        (["--clock-rate", "1e7"], "--clock-rate: 1e7 is more than the 1e"),
    ],
)
def test_a_bad_clock_flag_is_refused_in_its_name(argv: list[str], message: str) -> None:
    with pytest.raises(OptionError, match="^" + message.replace("(", r"\(")):
        parse_options(argv)


@pytest.mark.parametrize(
    ("flag", "value"), [("--start-at", "2026-12-07T01:30"), ("--clock-rate", "60")]
)
def test_the_clock_flags_are_refused_over_a_real_api_server(
    flag: str, value: str, tmp_path: Path
) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", "https://127.0.0.1:6443")

    with pytest.raises(OptionError, match=f"^{flag}: not with --kubeconfig"):
        parse_options(["--kubeconfig", str(kubeconfig), flag, value])


def test_a_bad_clock_flag_ends_the_command_with_one_line_and_exit_two(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["--clock-rate", "0.5"])

    err = capsys.readouterr().err
    assert code == 2
    assert err == (
        "brupop simulate: --clock-rate: 0.5 is below 1; the clock never runs slower than this "
        "machine's\n"
    )


def test_help_says_in_which_zone_a_start_without_an_offset_is_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        parse_options(["--help"])

    shown = " ".join(capsys.readouterr().out.split())
    assert "--start-at TIME" in shown and "--clock-rate N" in shown
    assert "time zone of the --policy's first window, or in UTC when it has none" in shown
