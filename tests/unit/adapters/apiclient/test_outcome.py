"""Interpreting one apiclient run: any stdout, stderr, exit code or signal gives either the
decoded answer or one of the adapter's typed HostApiError subclasses, never anything else.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.adapters.apiclient import outcome
from brupop.adapters.apiclient.outcome import TransientHostError
from brupop.domain.boot_mode import BootMode
from brupop.domain.host.command_result import CommandResult
from brupop.domain.host.host import HostUpdateState
from brupop.domain.host_kind import HostKind
from brupop.ports.errors import (
    HostApiError,
    HostCommandKilledError,
    HostRejectedError,
    HostResponseError,
)
from tests.support.updates_status import updates_status_body

ARGV = ("apiclient", "raw", "-u", "/updates/status")
STATUS_JSON = updates_status_body(running="1.0.0", chosen="1.1.0", variant="aws-k8s-1.30")
PARSERS: list[Callable[[CommandResult], Any]] = [
    outcome.parse_os_info,
    outcome.parse_update_status,
    outcome.check_accepted,
    outcome.parse_host_class,
    outcome.parse_boot_mode,
]


def _result(code: int, stdout: str = "", stderr: str = "") -> CommandResult:
    return CommandResult.from_returncode(ARGV, code, stdout, stderr, 0.05)


def _apiclient_error(status: int, body: str) -> str:
    return (
        f"Failed GET request to '/updates/status': "
        f"Status {status} when GETing /updates/status: {body}\n"
    )


def test_a_status_is_decoded_with_kebab_case_commands_and_nanosecond_timestamps() -> None:
    status = outcome.parse_update_status(_result(0, json.dumps(STATUS_JSON) + "\n"))

    assert status is not None
    assert status.update_state is HostUpdateState.AVAILABLE
    assert status.chosen_version() == "1.1.0"


def test_404_on_update_status_means_no_status_yet() -> None:
    stderr = _apiclient_error(404, "Update status is uninitialized, refresh-updates to init")

    assert outcome.parse_update_status(_result(1, stderr=stderr)) is None


def test_423_is_transient() -> None:
    with pytest.raises(TransientHostError):
        outcome.parse_update_status(_result(1, stderr=_apiclient_error(423, "Update lock held")))


@pytest.mark.parametrize("stderr", ["", "Failed to send request: connection refused", "Status"])
def test_a_failure_without_an_http_status_is_transient(stderr: str) -> None:
    with pytest.raises(TransientHostError):
        outcome.check_accepted(_result(1, stderr=stderr))


@pytest.mark.parametrize("status", [400, 404, 409, 500])
def test_other_http_errors_are_rejections_with_their_status(status: int) -> None:
    with pytest.raises(HostRejectedError) as rejected:
        outcome.check_accepted(_result(1, stderr=_apiclient_error(status, "no")))

    assert rejected.value.status == status
    assert not isinstance(rejected.value, TransientHostError)


@pytest.mark.parametrize("parse", PARSERS)
def test_killed_by_a_signal_is_reported_with_the_signal(
    parse: Callable[[CommandResult], Any],
) -> None:
    with pytest.raises(HostCommandKilledError) as killed:
        parse(_result(-signal.SIGTERM))

    assert killed.value.signal == signal.SIGTERM


@pytest.mark.parametrize(
    "stdout",
    ["", "not json", "[]", "null", '{"update_state": 3}', '{"version_id": "latest"}', "[" * 5000],
)
def test_output_that_is_not_the_expected_json_is_a_response_error(stdout: str) -> None:
    with pytest.raises(HostResponseError):
        outcome.parse_os_info(_result(0, stdout))


def test_a_settings_refusal_with_a_status_is_a_host_kind_not_an_error() -> None:
    locked = outcome.parse_host_class(
        _result(1, stderr=_apiclient_error(500, "Live datastore missing"))
    )
    assert locked.kind is HostKind.LOCKED_DOWN
    odd = outcome.parse_host_class(_result(1, stderr=_apiclient_error(502, "bad gateway")))
    assert (odd.kind, odd.note) == (HostKind.UNEXPECTED_ANSWER, "settings answered 502")
    assert outcome.parse_host_class(_result(0, "not json")).kind is HostKind.UNEXPECTED_ANSWER


def test_a_settings_read_that_reaches_no_host_is_transient() -> None:
    with pytest.raises(TransientHostError):
        outcome.parse_host_class(_result(1, stderr="Failed to send request: os error 2"))


def _fips_report(status: str) -> str:
    return json.dumps({"status": status, "results": {"fips01000000": {"status": status}}})


def test_a_fips_report_shows_the_boot_mode_and_a_refused_report_shows_none() -> None:
    assert outcome.parse_boot_mode(_result(0, _fips_report("PASS"))) is BootMode.FIPS
    assert outcome.parse_boot_mode(_result(0, _fips_report("FAIL"))) is BootMode.STANDARD
    assert outcome.parse_boot_mode(_result(0, _fips_report("SKIP"))) is None
    assert outcome.parse_boot_mode(_result(0, "Benchmark name: FIPS")) is None
    assert outcome.parse_boot_mode(_result(1, stderr=_apiclient_error(404, "Not Found"))) is None
    assert outcome.parse_boot_mode(_result(1, stderr=_apiclient_error(500, "exec"))) is None


def test_a_fips_report_read_that_reaches_no_host_is_transient() -> None:
    with pytest.raises(TransientHostError):
        outcome.parse_boot_mode(_result(1, stderr="Failed to send request: os error 2"))


def test_an_image_without_a_semantic_version_is_a_response_error() -> None:
    broken = {**STATUS_JSON, "chosen_update": {"version": "next", "arch": "x86_64"}}

    with pytest.raises(HostResponseError):
        outcome.parse_update_status(_result(0, json.dumps(broken)))


_SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10)
_JSON = _SCALAR | st.lists(_SCALAR, max_size=3) | st.dictionaries(st.text(max_size=8), _SCALAR)
_STATUS_FIELDS = st.fixed_dictionaries(
    {}, optional={key: _JSON | st.just(value) for key, value in STATUS_JSON.items()}
)
_STDOUT = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=40).map(lambda data: data.decode("utf-8", errors="replace")),
    _JSON.map(json.dumps),
    _STATUS_FIELDS.map(json.dumps),
)
_STDERR = st.one_of(
    st.text(max_size=40),
    st.builds(_apiclient_error, st.integers(min_value=100, max_value=599), st.text(max_size=20)),
    st.text(max_size=10).map(lambda text: f"Status {text}"),
)
# Real return codes (negative: killed by that signal), and results no process could produce.
_RESULTS = st.one_of(
    st.builds(
        lambda code, out, err: CommandResult.from_returncode(ARGV, code, out, err, 0.01),
        st.integers(min_value=-64, max_value=255) | st.integers(),
        _STDOUT,
        _STDERR,
    ),
    st.builds(
        lambda code, sig, out, err: CommandResult(ARGV, code, sig, out, err, 0.0),
        st.none() | st.integers(),
        st.none() | st.integers(),
        _STDOUT,
        _STDERR,
    ),
)


@settings(max_examples=1000, deadline=None)
@given(result=_RESULTS, parse=st.sampled_from(PARSERS))
def test_no_output_escapes_as_anything_but_a_typed_host_error(
    result: CommandResult, parse: Callable[[CommandResult], Any]
) -> None:
    try:
        parse(result)
    except HostApiError as error:
        assert error.result is result  # the raw output travels with the error, for logs
