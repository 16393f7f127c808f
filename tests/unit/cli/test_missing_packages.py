"""A command whose packages this installation leaves out (the agent image has no Kubernetes
client) says so in one line with exit 2, instead of a ModuleNotFoundError traceback."""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

from brupop.cli import main as cli


def test_a_command_whose_packages_are_left_out_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def without_kubernetes(name: str) -> ModuleType:
        raise ModuleNotFoundError("No module named 'kubernetes'", name="kubernetes")

    monkeypatch.setattr(importlib, "import_module", without_kubernetes)

    assert cli.main(["controller"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "brupop controller: this installation lacks 'kubernetes'" in err
    assert "control image" in err


def test_a_module_of_brupop_itself_missing_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_install(name: str) -> ModuleType:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(importlib, "import_module", broken_install)

    with pytest.raises(ModuleNotFoundError):
        cli.main(["controller"])
