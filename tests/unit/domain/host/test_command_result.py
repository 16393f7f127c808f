"""CommandResult answers every question about a finished command without raising."""

import signal

from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.host.command_result import CommandResult, signal_name

ARGV = ("apiclient", "raw", "-u", "/actions/reboot", "-m", "POST")


def test_reboot_killed_by_sigterm_is_a_signal_not_a_panic() -> None:
    result = CommandResult.from_returncode(ARGV, -signal.SIGTERM, b"", b"", 0.2)
    assert result.killed_by_signal()
    assert result.signal == signal.SIGTERM
    assert result.signal_name() == "SIGTERM"
    assert not result.succeeded()
    assert result.http_status() is None
    assert not result.update_lock_held()


def test_http_status_is_read_from_apiclient_stderr() -> None:
    stderr = (
        "Failed POST request to '/actions/refresh-updates': Status 423 when POSTing "
        "/actions/refresh-updates: Update lock held"
    )
    result = CommandResult.from_returncode(ARGV, 1, "", stderr, 0.1)
    assert result.http_status() == 423
    assert result.update_lock_held()


def test_stderr_without_status_has_no_http_status() -> None:
    stderr = "Failed to send request: Connection refused (os error 111)"
    result = CommandResult.from_returncode(ARGV, 1, "", stderr, 0.1)
    assert result.http_status() is None
    assert not result.update_lock_held()


def test_word_status_alone_is_not_a_status() -> None:
    for stderr in ["Status", "Status ", "Status abc", "Status 99", "Status 600", "xStatus 404"]:
        assert CommandResult.from_returncode(ARGV, 1, "", stderr, 0.0).http_status() is None


def test_exit_zero_is_success() -> None:
    result = CommandResult.from_returncode(ARGV, 0, b'{"a":1}', b"", 0.0)
    assert result.succeeded()
    assert result.stdout == '{"a":1}'
    assert not result.killed_by_signal()
    assert result.signal_name() is None


def test_undecodable_output_is_replaced_not_raised() -> None:
    result = CommandResult.from_returncode(ARGV, 1, b"\xff\xfe", b"\xc3(Status 404", 0.0)
    assert "\ufffd" in result.stdout
    assert result.http_status() == 404


@settings(max_examples=1000)
@given(
    returncode=st.integers(min_value=-64, max_value=255),
    stdout=st.binary(max_size=200) | st.text(max_size=200),
    stderr=st.binary(max_size=200) | st.text(max_size=200),
)
def test_no_question_ever_raises(returncode: int, stdout: bytes | str, stderr: bytes | str) -> None:
    result = CommandResult.from_returncode(ARGV, returncode, stdout, stderr, 0.0)
    status = result.http_status()
    assert status is None or 100 <= status <= 599
    assert result.succeeded() == (returncode == 0)
    assert result.killed_by_signal() == (returncode < 0)
    assert isinstance(result.update_lock_held(), bool)
    assert isinstance(result.describe(), str)
    name = result.signal_name()
    assert (name is None) == (returncode >= 0)


def test_a_signal_without_a_name_is_named_by_its_number() -> None:
    assert signal_name(15) == "SIGTERM"
    assert signal_name(99) == "signal 99"
    assert CommandResult.from_returncode(ARGV, -99, "", "", 0.0).signal_name() == "signal 99"
