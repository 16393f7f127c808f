"""`brupop controller` started in-process on the in-memory cluster with one bad setting: the
environment it starts from and the one line it refuses with (exit 2, no traceback)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import pytest
import structlog

from brupop.entrypoints.controller.main import main

CONTROLLER_ENV = {"MY_NODE_NAME": "node-a", "BRUPOP_CLUSTER": "memory"}


def controller_environment(
    monkeypatch: pytest.MonkeyPatch, cleared: Iterable[str] = ()
) -> Iterator[None]:
    """For an autouse fixture: `cleared` unset, the node name and the in-memory cluster set;
    structlog's configuration (main() changes it) put back afterwards."""
    for variable in cleared:
        monkeypatch.delenv(variable, raising=False)
    for variable, value in CONTROLLER_ENV.items():
        monkeypatch.setenv(variable, value)
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def refusal_at_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: str, value: str
) -> str:
    """The one line `brupop controller` stops with at start when `variable` is `value`: it
    names the variable first and stays short whatever the value's length."""
    monkeypatch.setenv(variable, value)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and len(err) < 600
    assert re.match(f"brupop controller: {re.escape(variable)}(: |/)", err)  # or a pair: A/B
    return err
