"""ApiclientUpdateApi over a scripted apiclient and a FakeClock: argv, retries only for
transient outcomes, the rate limit, and waiting for asynchronous host commands.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from brupop.adapters.apiclient.update_api import ApiclientUpdateApi
from brupop.domain.host.host import HostUpdateState
from brupop.ports.errors import (
    HostCommandFailedError,
    HostCommandKilledError,
    HostRejectedError,
    HostResponseError,
    HostStateConflictError,
    HostUnavailableError,
)
from tests.fakes.clock import FakeClock
from tests.unit.adapters.apiclient.scripted_apiclient import (
    Answer,
    ScriptedApiclient,
    http_error,
    killed,
    ok,
    status_json,
)

OS_JSON = '{"version_id": "1.0.0", "pretty_name": "Bottlerocket OS 1.0.0"}'
STATUS = "/updates/status"
REFRESH = "/actions/refresh-updates"


def _api(clock: FakeClock, runner: ScriptedApiclient, **settings: Any) -> ApiclientUpdateApi:
    defaults: dict[str, Any] = {"rate_period_seconds": 0, "poll_interval_seconds": 2}
    return ApiclientUpdateApi(
        clock, apiclient_path="/bin/apiclient", runner=runner, **{**defaults, **settings}
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def apiclient(clock: FakeClock) -> ScriptedApiclient:
    return ScriptedApiclient(clock)


def test_calls_are_apiclient_raw_with_post_only_for_actions(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    apiclient.script("/os", ok(OS_JSON))
    apiclient.script("/actions/reboot", ok())
    api = _api(clock, apiclient, timeout_seconds=42)

    assert api.os_info().version_id == "1.0.0"
    api.reboot()

    assert [argv for _, argv in apiclient.calls] == [
        ["/bin/apiclient", "raw", "-u", "/os"],
        ["/bin/apiclient", "raw", "-u", "/actions/reboot", "-m", "POST"],
    ]
    assert apiclient.timeouts == [42, 42]


def test_update_status_is_none_when_the_host_has_none_yet(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    apiclient.script(STATUS, http_error(404, "Update status is uninitialized"))

    assert _api(clock, apiclient).update_status() is None


def test_transient_outcomes_are_retried_with_full_jitter(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    apiclient.script(STATUS, http_error(423, "Update lock held"), http_error(0), ok(status_json()))
    api = _api(clock, apiclient, retry_base_seconds=10, retry_max_seconds=60)

    status = api.update_status()

    assert status is not None and status.update_state is HostUpdateState.AVAILABLE
    assert len(apiclient.calls) == 3
    assert len(clock.sleeps) == 2
    assert 0 <= clock.sleeps[0] <= 10 and 0 <= clock.sleeps[1] <= 20


def test_retries_end_with_host_unavailable_and_backoff_stays_capped(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    apiclient.script(STATUS, http_error(423, "Update lock held"))
    api = _api(clock, apiclient, retries=5, retry_base_seconds=10, retry_max_seconds=25)

    with pytest.raises(HostUnavailableError, match="423"):
        api.update_status()

    assert len(apiclient.calls) == 6
    bounds = [10, 20, 25, 25, 25]  # base * 2**n, capped at the maximum
    assert all(0 <= s <= bound for s, bound in zip(clock.sleeps, bounds, strict=True))


@pytest.mark.parametrize(
    "answer",
    [
        http_error(409, "Update action not allowed according to update state"),
        http_error(500, "Update dispatcher failed"),
        ok("<html>not json</html>"),
        killed(signal.SIGKILL),
        HostUnavailableError("apiclient raw -u /os: no answer within 60 s; killed"),
    ],
    ids=["409", "500", "garbage", "killed", "timeout"],
)
def test_other_outcomes_are_never_retried(
    clock: FakeClock, apiclient: ScriptedApiclient, answer: Answer
) -> None:
    apiclient.script("/os", answer)

    expected = (HostRejectedError, HostResponseError, HostCommandKilledError, HostUnavailableError)
    with pytest.raises(expected) as raised:
        _api(clock, apiclient).os_info()
    if isinstance(answer, HostUnavailableError):
        assert raised.value is answer

    assert len(apiclient.calls) == 1 and clock.sleeps == []


def test_the_update_api_is_rate_limited_but_os_and_reboot_are_not(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    apiclient.script("/os", ok(OS_JSON))
    apiclient.script("/actions/reboot", ok())
    apiclient.script(STATUS, ok(status_json()))
    api = _api(clock, apiclient, rate_period_seconds=10, rate_burst=2)

    for _ in range(5):
        api.os_info()
        api.reboot()
    assert clock.sleeps == []

    for _ in range(3):
        api.update_status()
    assert clock.sleeps == [pytest.approx(10, abs=0.1)]


def test_a_command_is_one_call_to_the_rate_limit_however_often_it_polls(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    done = ok(status_json("Available", "refresh", at=clock.now() + timedelta(seconds=5)))
    apiclient.script(REFRESH, ok())
    apiclient.script(STATUS, http_error(423), http_error(423), http_error(423), done)
    api = _api(clock, apiclient, rate_period_seconds=10, rate_burst=2)

    api.refresh_updates()

    assert apiclient.uris() == [REFRESH, STATUS, STATUS, STATUS, STATUS]
    assert clock.sleeps == [2, 2, 2]  # the poll interval only: no wait for the limit
    api.update_status()
    assert clock.sleeps == [2, 2, 2]  # the burst's second call is still there


def _commanded(
    clock: FakeClock, apiclient: ScriptedApiclient, *statuses: Answer, **settings: Any
) -> Callable[[], Any]:
    apiclient.script(REFRESH, ok())
    apiclient.script(STATUS, *statuses)
    return _api(clock, apiclient, **settings).refresh_updates


def test_a_command_polls_through_423_until_its_own_record_appears(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    done = ok(status_json("Available", "refresh", at=clock.now() + timedelta(seconds=5)))
    refresh = _commanded(clock, apiclient, http_error(423), http_error(423), done)

    status = refresh()

    assert status.update_state is HostUpdateState.AVAILABLE
    assert apiclient.uris() == [REFRESH, STATUS, STATUS, STATUS]
    assert clock.sleeps == [2, 2]  # the poll interval, not the retry backoff


def test_a_stale_record_of_the_same_command_is_not_taken_for_the_new_one(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    stale = ok(status_json("Idle", "refresh", at=clock.now() - timedelta(minutes=5)))
    fresh = ok(status_json("Available", "refresh", at=clock.now() + timedelta(seconds=1)))
    refresh = _commanded(clock, apiclient, stale, fresh)

    assert refresh().update_state is HostUpdateState.AVAILABLE
    assert apiclient.uris().count(STATUS) == 2


def test_a_record_within_the_clock_skew_allowance_counts(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    skewed = ok(status_json("Available", "refresh", at=clock.now() - timedelta(seconds=1)))
    refresh = _commanded(clock, apiclient, skewed, clock_skew_seconds=2)

    assert refresh().update_state is HostUpdateState.AVAILABLE


def test_a_failed_record_raises_command_failed_with_the_host_stderr(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    failed = ok(status_json("Idle", "refresh", "Failed", at=clock.now() + timedelta(seconds=1)))
    refresh = _commanded(clock, apiclient, failed)

    with pytest.raises(HostCommandFailedError, match=r"host reports Failed.*updog failed"):
        refresh()


def test_another_command_recorded_after_the_request_fails_the_wait(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    other = ok(status_json("Staged", "prepare", at=clock.now() + timedelta(seconds=1)))
    refresh = _commanded(clock, apiclient, other)

    with pytest.raises(HostCommandFailedError, match="ran prepare after it"):
        refresh()


def test_a_command_still_running_at_the_deadline_fails(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    refresh = _commanded(clock, apiclient, http_error(423), command_deadline_seconds=8)
    started = clock.monotonic()

    with pytest.raises(HostCommandFailedError, match="not finished within 8 s"):
        refresh()

    assert 8 <= clock.monotonic() - started < 12


def test_a_command_waits_no_longer_than_apiclient_would_for_it(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    refresh = _commanded(clock, apiclient, http_error(423), command_deadline_seconds=600)
    started = clock.monotonic()

    with pytest.raises(HostCommandFailedError, match="not finished within 10 s"):
        refresh()  # apiclient waits 10 s for a refresh

    assert 10 <= clock.monotonic() - started < 14


def test_a_409_is_a_state_conflict_to_refresh_after(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    apiclient.script("/actions/activate-update", http_error(409))

    with pytest.raises(HostStateConflictError) as raised:
        _api(clock, apiclient).activate_update()

    assert raised.value.status == 409
    assert apiclient.uris() == ["/actions/activate-update"]  # not retried


def test_a_missing_status_while_polling_is_waited_out(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    done = ok(status_json("Available", "refresh", at=clock.now() + timedelta(seconds=3)))
    refresh = _commanded(clock, apiclient, http_error(404), done)

    assert refresh().update_state is HostUpdateState.AVAILABLE


@pytest.mark.parametrize(
    ("method", "uri"),
    [
        ("os_info", "/os"),
        ("update_status", STATUS),
        ("refresh_updates", REFRESH),
        ("prepare_update", "/actions/prepare-update"),
        ("activate_update", "/actions/activate-update"),
        ("deactivate_update", "/actions/deactivate-update"),
        ("reboot", "/actions/reboot"),
    ],
)
def test_a_killed_apiclient_is_reported_with_its_signal_by_every_call(
    clock: FakeClock, apiclient: ScriptedApiclient, method: str, uri: str
) -> None:
    apiclient.script(uri, killed(signal.SIGTERM))

    with pytest.raises(HostCommandKilledError) as raised:
        getattr(_api(clock, apiclient), method)()

    assert raised.value.signal == signal.SIGTERM
    assert len(apiclient.calls) == 1


def test_a_command_answered_with_garbage_and_never_recorded_says_both(
    clock: FakeClock, apiclient: ScriptedApiclient
) -> None:
    apiclient.script(REFRESH, ok('{"update_state": \ufffd\ufffd\x00<<garbage>>\n'))
    earlier = ok(status_json("Available", "prepare", at=clock.now() - timedelta(seconds=1)))
    apiclient.script(STATUS, earlier)
    refresh = _api(clock, apiclient, clock_skew_seconds=2).refresh_updates

    with pytest.raises(HostCommandFailedError) as failed:
        refresh()

    message = str(failed.value)
    assert message.startswith(
        "refresh: the host has not recorded it: its latest command is prepare"
    )
    assert "unexpected output" in message and "<<garbage>>" in message
    assert "after it" not in message  # the prepare ran before the request, not after
