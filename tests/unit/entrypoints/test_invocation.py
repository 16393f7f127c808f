"""The three processes open the same way: `--help` prints the usage and exits 0, any argument
is refused in the same words with exit 2."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from brupop.entrypoints.agent.main import main as agent_main
from brupop.entrypoints.apiserver.main import main as apiserver_main
from brupop.entrypoints.controller.main import main as controller_main
from brupop.entrypoints.invocation import EXIT_BAD_SETTINGS, EXIT_OK

MAINS: dict[str, Callable[[list[str]], int]] = {
    "agent": agent_main,
    "controller": controller_main,
    "apiserver": apiserver_main,
}


@pytest.mark.parametrize("process", list(MAINS))
def test_each_process_prints_its_usage_for_help_and_exits_zero(
    process: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = MAINS[process](["--help"])

    assert code == EXIT_OK
    assert capsys.readouterr().out.startswith(f"usage: brupop {process}\n")


@pytest.mark.parametrize("process", list(MAINS))
def test_each_process_refuses_arguments_in_the_same_words_and_exits_two(
    process: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = MAINS[process](["--foo", "bar"])

    err = capsys.readouterr().err
    assert code == EXIT_BAD_SETTINGS
    assert err.startswith(f"brupop {process}: unexpected arguments '--foo' 'bar'\n\nusage: ")
