"""RELEASE_AGE_QUORUM: a whole number of nodes from 1 (refused at start otherwise, naming the
variable); unset or empty, the default share of the fleet."""

from __future__ import annotations

import pytest

from brupop.entrypoints.controller.settings import load_settings
from brupop.entrypoints.settings_error import SettingsError


@pytest.fixture(autouse=True)
def _controller_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_NODE_NAME", "node-a")
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.delenv("RELEASE_AGE_QUORUM", raising=False)


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5"])
def test_a_quorum_below_one_node_or_not_a_count_stops_the_start_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("RELEASE_AGE_QUORUM", value)

    with pytest.raises(SettingsError) as refused:
        load_settings()

    assert refused.value.variable == "RELEASE_AGE_QUORUM"


@pytest.mark.parametrize(("value", "quorum"), [(None, None), ("", None), ("3", 3)])
def test_a_set_quorum_reaches_the_controller_and_an_empty_one_is_the_default(
    monkeypatch: pytest.MonkeyPatch, value: str | None, quorum: int | None
) -> None:
    if value is not None:
        monkeypatch.setenv("RELEASE_AGE_QUORUM", value)

    _, config = load_settings()

    assert config.release_age_quorum == quorum
