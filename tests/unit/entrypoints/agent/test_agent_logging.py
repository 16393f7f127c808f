"""The agent applies TRACING_FILTER_DIRECTIVE and LOGGING_FORMATTER as the other processes do,
through its own event-line writer (it never loads structlog)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from brupop.adapters.system import event_lines
from brupop.entrypoints.agent.composition import configure_agent_logging
from brupop.entrypoints.agent.settings import load_settings

NODE = {"MY_NODE_NAME": "node-a", "LOGGING_FORMATTER": "json"}


@pytest.fixture(autouse=True)
def _default_output_afterwards() -> Iterator[None]:
    """The writer's output is process-wide: give the next test the defaults back."""
    yield
    event_lines.configure(level=event_lines.INFO, as_json=True)


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in capsys.readouterr().err.splitlines() if line]


def _configured(directive: str) -> None:
    env = {**NODE, "TRACING_FILTER_DIRECTIVE": directive}
    settings = load_settings(env, namespace_file=Path("/nonexistent/namespace"))
    configure_agent_logging(settings)


def test_off_silences_the_agent(capsys: pytest.CaptureFixture[str]) -> None:
    _configured("off")
    event_lines.get_logger().error("agent.something_failed")
    assert _lines(capsys) == []


def test_a_directive_for_the_agent_sets_its_level(capsys: pytest.CaptureFixture[str]) -> None:
    _configured("info,agent=debug")
    event_lines.get_logger().debug("agent.detail")
    assert [line["event"] for line in _lines(capsys)] == ["agent.detail"]


def test_a_target_the_agent_has_no_use_for_is_named_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _configured("info,kube=debug")
    (line,) = _lines(capsys)
    assert line["event"] == "logging.directive_parts_unused"
    assert line["unused"] == ["kube=debug"]
    assert line["node"] == "node-a"
