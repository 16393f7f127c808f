"""`brupop controller` refuses a bad notification setting at start: exit 2, one line naming the
variable, and a webhook URL is never echoed (it may hold a token)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.controller_start import controller_environment, refusal_at_start


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from controller_environment(monkeypatch)


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
        ("NOTIFICATION_WEBHOOK_1_FORMAT", "teams", "json or slack"),
        ("NOTIFICATION_WEBHOOK_1_EVENTS", "node_failed,node_exploded", "unknown event"),
    ],
)
def test_a_bad_notification_setting_stops_the_controller_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    accepted: str,
) -> None:
    # A good webhook beside the bad setting (a format or event list applies to a webhook).
    monkeypatch.setenv("NOTIFICATION_WEBHOOK_1_URL", "https://hooks.example/T0KEN")
    err = refusal_at_start(monkeypatch, capsys, variable, value)
    assert accepted in err
    assert "T0KEN" not in err
