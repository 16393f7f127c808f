"""The agent's own structured log: the lines structlog would have written, and no more."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest

from brupop.adapters.system import event_lines


@pytest.fixture
def out() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    yield stream
    event_lines.configure(level=event_lines.INFO, as_json=True)  # back to the default


def _lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_json_line_carries_event_fields_context_level_and_utc_timestamp(
    out: io.StringIO,
) -> None:
    log = event_lines.configure(
        level=event_lines.INFO, as_json=True, stream=out, component="agent", node="n1"
    )

    log.info("node.updated", version="1.20.0")

    (line,) = _lines(out)
    assert {k: line[k] for k in ("event", "version", "component", "node", "level")} == {
        "event": "node.updated",
        "version": "1.20.0",
        "component": "agent",
        "node": "n1",
        "level": "info",
    }
    assert str(line["timestamp"]).endswith("Z")


def test_loggers_taken_before_configuration_follow_it_and_lines_below_the_level_are_dropped(
    out: io.StringIO,
) -> None:
    early = event_lines.get_logger(__name__)
    event_lines.configure(level=event_lines.WARNING, as_json=True, stream=out, node="n1")

    early.info("host.command_finished")
    early.warning("apiserver.retry", attempt=2)

    assert [(line["event"], line["node"]) for line in _lines(out)] == [("apiserver.retry", "n1")]


def test_an_error_with_exc_info_carries_the_traceback_in_one_json_line(out: io.StringIO) -> None:
    log = event_lines.configure(level=event_lines.INFO, as_json=True, stream=out)

    try:
        raise RuntimeError("boom")
    except RuntimeError:
        log.error("agent.crashed", error="RuntimeError", exc_info=True)

    (line,) = _lines(out)
    assert "exc_info" not in line
    assert "Traceback (most recent call last)" in str(line["exception"])
    assert "RuntimeError: boom" in str(line["exception"])


def test_on_a_terminal_a_line_is_readable_text(out: io.StringIO) -> None:
    log = event_lines.configure(level=event_lines.DEBUG, as_json=False, stream=out)

    log.bind(node="n1").debug("apiclient.rate_limited", wait_seconds=0.5)

    text = out.getvalue()
    assert "[debug  ] apiclient.rate_limited" in text
    assert "node=n1 wait_seconds=0.5" in text
