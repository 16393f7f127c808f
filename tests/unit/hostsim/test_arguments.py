"""The emulator accepts apiclient's `raw` arguments and nothing else."""

from __future__ import annotations

import pytest

from brupop.hostsim.__main__ import UsageError, parse_args


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["raw", "-u", "/os"], ("GET", "/os")),
        (["raw", "-u", "/actions/reboot", "-m", "POST"], ("POST", "/actions/reboot")),
        (["raw", "--uri", "/x", "--method", "POST"], ("POST", "/x")),
        (["-X", "POST", "-u", "/x"], ("POST", "/x")),
    ],
)
def test_raw_arguments_in_short_and_long_forms(argv: list[str], parsed: tuple[str, str]) -> None:
    assert parse_args(argv) == parsed


@pytest.mark.parametrize(
    "argv", [[], ["raw"], ["raw", "-u"], ["raw", "-m", "POST"], ["get", "-u", "/os"]]
)
def test_anything_else_is_a_usage_error(argv: list[str]) -> None:
    with pytest.raises(UsageError):
        parse_args(argv)
