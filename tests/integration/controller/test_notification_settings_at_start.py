"""`brupop controller` refuses a bad notification setting at start: exit 2, one line naming the
variable, and a webhook URL is never echoed (it may hold a token)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog

from brupop.entrypoints.controller.main import main


@pytest.fixture(autouse=True)
def controller_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("MY_NODE_NAME", "node-a")
    monkeypatch.setenv("BRUPOP_CLUSTER", "memory")
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.mark.parametrize(
    ("variable", "value", "accepted"),
    [
        ("NOTIFICATION_WEBHOOK_1_URL", "ftp://hooks.example/T0KEN", "http:// or https://"),
        ("NOTIFICATION_WEBHOOK_1_URL", "https:///T0KEN", "has no host"),
        ("NOTIFICATION_WEBHOOK_1_URL", "https://hooks.example:99999/T0KEN", "not a URL"),
        ("NOTIFICATION_WEBHOOK_9_URL", "https://hooks.example/T0KEN", "numbered 1 to 8"),
        ("NOTIFICATION_QUEUE_SIZE", "0", "greater than or equal to 1"),
        ("NOTIFICATION_TIMEOUT_SECONDS", "inf", "finite number"),
        ("NOTIFICATION_ATTEMPTS", "100", "less than or equal to 10"),
        ("CLUSTER_NAME", "x" * 200, "at most 128"),
    ],
)
def test_a_bad_notification_setting_stops_the_controller_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    accepted: str,
) -> None:
    monkeypatch.setenv(variable, value)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"brupop controller: {variable}")
    assert accepted in err
    assert "T0KEN" not in err


@pytest.mark.parametrize(
    ("variable", "value", "accepted"),
    [
        ("NOTIFICATION_WEBHOOK_1_FORMAT", "teams", "json or slack"),
        ("NOTIFICATION_WEBHOOK_1_EVENTS", "node_failed,node_exploded", "unknown event"),
    ],
)
def test_a_bad_webhook_format_or_event_list_stops_the_controller(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    accepted: str,
) -> None:
    monkeypatch.setenv("NOTIFICATION_WEBHOOK_1_URL", "https://hooks.example/T0KEN")
    monkeypatch.setenv(variable, value)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"brupop controller: {variable}")
    assert accepted in err
