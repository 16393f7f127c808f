"""SharedClock: one virtual wall clock for several processes, moved ahead by its owner only; the
monotonic clock and sleeps stay the machine's."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from brupop.adapters.system.clock import SystemClock
from brupop.adapters.system.shared_clock import CLOCK_FILE_ENV, SharedClock, clock_from_environment


def _close(moment: datetime, expected: datetime) -> bool:
    return abs((moment - expected).total_seconds()) < 2


def test_the_owners_clock_starts_its_offset_ahead_of_the_machines(tmp_path: Path) -> None:
    clock = SharedClock.create(tmp_path / "clock", 3600.0)

    assert _close(clock.now(), datetime.now(UTC) + timedelta(hours=1))
    assert clock.now().tzinfo is not None


def test_a_reader_sees_each_step_its_owner_takes(tmp_path: Path) -> None:
    owner = SharedClock.create(tmp_path / "clock", 0.0)
    reader = SharedClock(tmp_path / "clock")

    owner.advance(86_400.0)

    assert _close(reader.now(), datetime.now(UTC) + timedelta(days=1))


def test_a_reader_keeps_the_last_offset_when_the_file_goes_bad(tmp_path: Path) -> None:
    path = tmp_path / "clock"
    SharedClock.create(path, 7200.0)
    reader = SharedClock(path)
    reader.offset()

    for bad in ("not a number", "nan", ""):
        path.write_text(bad)
        assert reader.offset() == 7200.0
    path.unlink()
    assert reader.offset() == 7200.0


def test_only_the_owner_moves_the_clock(tmp_path: Path) -> None:
    SharedClock.create(tmp_path / "clock", 0.0)

    with pytest.raises(PermissionError):
        SharedClock(tmp_path / "clock").advance(1.0)


def test_the_clock_never_steps_back(tmp_path: Path) -> None:
    owner = SharedClock.create(tmp_path / "clock", 100.0)

    owner.advance(-50.0)

    assert owner.offset() == 100.0


def test_monotonic_time_and_sleeps_are_the_machines_whatever_the_offset(tmp_path: Path) -> None:
    clock = SharedClock.create(tmp_path / "clock", 1e6)
    before = time.monotonic()

    clock.sleep(0.01)
    seen = clock.monotonic()

    assert before + 0.005 < seen <= time.monotonic()  # the machine's, not a million seconds on


def test_a_process_without_the_setting_gets_the_machines_clock() -> None:
    assert isinstance(clock_from_environment({}), SystemClock)


def test_a_process_given_the_setting_reads_the_shared_clock(tmp_path: Path) -> None:
    SharedClock.create(tmp_path / "clock", 3600.0)

    clock = clock_from_environment({CLOCK_FILE_ENV: str(tmp_path / "clock")})

    assert _close(clock.now(), datetime.now(UTC) + timedelta(hours=1))
