"""VARIANT_OFFER_GRACE_SECONDS: how long a variant may go without an offer before its nodes say
so; 0 to 30 days (refused at start otherwise, naming the variable); unset, 6 hours."""

from __future__ import annotations

import pytest

from brupop.entrypoints.controller.settings import load_settings
from brupop.entrypoints.settings_error import SettingsError

VARIABLE = "VARIANT_OFFER_GRACE_SECONDS"


@pytest.fixture(autouse=True)
def _controller_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_NODE_NAME", "node-a")
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    monkeypatch.delenv(VARIABLE, raising=False)


@pytest.mark.parametrize("value", ["-1", "2592001", "six hours", "nan", "inf", ""])
def test_a_grace_below_zero_above_thirty_days_or_not_a_number_stops_the_start_naming_it(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(VARIABLE, value)

    with pytest.raises(SettingsError) as refused:
        load_settings()

    assert refused.value.variable == VARIABLE


@pytest.mark.parametrize(("value", "seconds"), [(None, 21600.0), ("0", 0.0), ("3600", 3600.0)])
def test_the_grace_reaches_the_controller_and_is_six_hours_when_unset(
    monkeypatch: pytest.MonkeyPatch, value: str | None, seconds: float
) -> None:
    if value is not None:
        monkeypatch.setenv(VARIABLE, value)

    _, config = load_settings()

    assert config.variant_offer_grace_seconds == seconds
