"""The chart's deprecated update window reaches the controller and takes effect when set, as the
controller reads it: the cron expression wins only when it was changed from its default."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from brupop.entrypoints.controller.settings import ControllerSettings, load_settings
from tests.deploy.rendering import Helm, Rendered

CONTROLLER = ("Deployment", "brupop-controller-deployment")
SCHEDULE_VARIABLES = ("SCHEDULER_CRON_EXPRESSION", "UPDATE_WINDOW_START", "UPDATE_WINDOW_STOP")
NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
WINDOW = {"update_window_start": "9:0:0", "update_window_stop": "17:0:0"}


def _controller_env(helm: Helm, values: dict[str, Any]) -> dict[str, str]:
    env = Rendered(helm.template(values)).env(*CONTROLLER)
    return {name: str(value) for name, value in env.items()}


def _controller_started_with(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> ControllerSettings:
    """The controller's settings as its pod would read them (fieldRefs given plain values)."""
    for variable in SCHEDULE_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    for variable, value in {**env, "MY_NODE_NAME": "node-a"}.items():
        monkeypatch.setenv(variable, value)
    settings, _ = load_settings()
    return settings


def test_the_window_values_replace_the_default_cron_expression(helm: Helm) -> None:
    env = _controller_env(helm, WINDOW)

    assert env["UPDATE_WINDOW_START"] == "9:0:0" and env["UPDATE_WINDOW_STOP"] == "17:0:0"
    assert "SCHEDULER_CRON_EXPRESSION" not in env


def test_the_controller_schedules_by_the_charts_window(
    helm: Helm, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _controller_started_with(_controller_env(helm, WINDOW), monkeypatch)

    window = settings.window(NOW)
    assert window.schedule.expression == "* * 9-17 * * * *"
    assert not settings.legacy_window_ignored


def test_without_a_window_the_cron_expression_is_rendered_as_before(helm: Helm) -> None:
    env = _controller_env(helm, {})

    assert env["SCHEDULER_CRON_EXPRESSION"] == "* * * * * * *"
    assert "UPDATE_WINDOW_START" not in env and "UPDATE_WINDOW_STOP" not in env


def test_a_changed_cron_expression_still_wins_over_the_window_with_a_warning(
    helm: Helm, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _controller_env(helm, {**WINDOW, "scheduler_cron_expression": "0 0 23 * * Sat *"})
    settings = _controller_started_with(env, monkeypatch)

    assert settings.window(NOW).schedule.expression == "0 0 23 * * Sat *"
    assert settings.legacy_window_ignored
