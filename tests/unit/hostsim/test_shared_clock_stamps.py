"""The emulated host stamps its records on the clock of the simulation that started it, so the
agent, reading the same clock, recognises them as answers to its own requests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from brupop.hostsim.store import CLOCK_FILE, clock_offset, now_rfc3339


def _stamp() -> datetime:
    return datetime.fromisoformat(now_rfc3339().replace("Z", "+00:00"))


def test_without_a_shared_clock_the_host_stamps_the_machines_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(CLOCK_FILE, raising=False)

    assert abs((_stamp() - datetime.now(UTC)).total_seconds()) < 2


def test_the_host_stamps_on_the_shared_clock_when_it_is_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "clock").write_text("172800.0")
    monkeypatch.setenv(CLOCK_FILE, str(tmp_path / "clock"))

    assert abs((_stamp() - (datetime.now(UTC) + timedelta(days=2))).total_seconds()) < 2


@pytest.mark.parametrize("content", [None, "garbage", "nan", "inf", "1e300"])
def test_an_unreadable_or_absurd_shared_clock_counts_as_no_offset(
    content: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "clock"
    if content is not None:
        path.write_text(content)
    monkeypatch.setenv(CLOCK_FILE, str(path))

    assert clock_offset() == 0.0
