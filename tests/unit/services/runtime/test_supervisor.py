"""Supervisor: a loop that raises is logged once per streak, restarted after a bounded pause,
and reported as failing while it keeps failing."""

from __future__ import annotations

import threading

from structlog.testing import capture_logs

from brupop.services.runtime.supervisor import RestartSchedule, Supervisor

QUICK = RestartSchedule(first_seconds=0.0, cap_seconds=0.0, failing_after=3, healthy_after=60.0)


class ScriptedLoop:
    """A loop body that raises the given errors one per run, then stops everything."""

    def __init__(self, errors: list[Exception], stop: threading.Event) -> None:
        self.errors = errors
        self.stop = stop
        self.runs = 0

    def __call__(self) -> None:
        self.runs += 1
        if self.errors:
            raise self.errors.pop(0)
        self.stop.set()


class SteppedTime:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_loop_that_raises_is_restarted_and_logged_once_in_one_line_without_traceback() -> None:
    stop = threading.Event()
    loop = ScriptedLoop([KeyError("shadow"), ValueError("bad"), RuntimeError("boom")], stop)
    with capture_logs() as logs:
        Supervisor("watch-test", loop, stop, schedule=QUICK).run()
    assert loop.runs == 4, "restarted after each failure until it ran to its end"
    errors = [e for e in logs if e["log_level"] == "error"]
    assert len(errors) == 1
    assert errors[0]["event"] == "loop.failed"
    assert (errors[0]["loop"], errors[0]["error"]) == ("watch-test", "KeyError")
    assert errors[0]["reason"] == "'shadow'"
    assert not any("exc_info" in e or "exception" in e for e in logs)


def test_a_loop_failing_three_times_in_a_row_is_failing_until_a_run_lasts() -> None:
    stop, time = threading.Event(), SteppedTime()
    seen: list[bool] = []
    supervisor: Supervisor

    def loop() -> None:
        seen.append(supervisor.failing)
        if len(seen) <= 3:
            raise RuntimeError("boom")
        time.now += 60.0  # this run lasts: the streak is over
        seen.append(supervisor.failing)
        stop.set()

    supervisor = Supervisor("watch-test", loop, stop, schedule=QUICK, monotonic=time)
    supervisor.run()
    assert seen == [False, False, False, True, False]
    assert supervisor.failures == 0


def test_a_new_streak_after_a_healthy_run_is_logged_again() -> None:
    stop, time = threading.Event(), SteppedTime()
    runs = iter([0.0, 0.0, 60.0, 0.0])

    def loop() -> None:
        lasted = next(runs, None)
        if lasted is None:
            stop.set()
            return
        time.now += lasted
        raise RuntimeError("boom")

    with capture_logs() as logs:
        Supervisor("watch-test", loop, stop, schedule=QUICK, monotonic=time).run()
    assert [e["event"] for e in logs if e["log_level"] == "error"] == ["loop.failed"] * 2


def test_restart_pauses_double_up_to_the_cap_without_huge_numbers() -> None:
    schedule = RestartSchedule(first_seconds=1.0, cap_seconds=30.0)
    assert [schedule.delay(n) for n in range(1, 8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert schedule.delay(10**9) == 30.0


def test_a_stop_during_the_pause_ends_the_supervisor_at_once() -> None:
    stop = threading.Event()

    def loop() -> None:
        stop.set()  # asked to stop while failing: the 1-hour pause must not be waited out
        raise RuntimeError("boom")

    slow = RestartSchedule(first_seconds=3600.0, cap_seconds=3600.0)
    thread = Supervisor("watch-test", loop, stop, schedule=slow).start()
    thread.join(30)
    assert not thread.is_alive()
