"""Records of uvicorn's and asyncio's loggers become JSON lines of the process's log."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from brupop.entrypoints.logging.logs import configure_logging
from brupop.entrypoints.logging.stdlib_logging import route_to_structlog

NAMES = ("uvicorn", "asyncio")


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    saved = structlog.get_config()
    loggers = [logging.getLogger(name) for name in NAMES]
    state = [(lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    yield
    structlog.configure(**saved)
    for logger, (handlers, level, propagate) in zip(loggers, state, strict=True):
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


def test_an_error_with_a_traceback_becomes_one_json_line() -> None:
    out = io.StringIO()
    configure_logging("apiserver", formatter="json", stream=out)
    route_to_structlog(NAMES, level=logging.INFO)
    try:
        raise ValueError("boom")
    except ValueError as error:
        logging.getLogger("uvicorn.error").error("Exception in ASGI application\n", exc_info=error)

    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert line["event"] == "Exception in ASGI application"
    assert line["level"] == "error"
    assert line["logger"] == "uvicorn.error"
    assert line["error"] == "ValueError: boom"
    assert "raise ValueError" in line["exception"]


def test_records_below_the_level_are_dropped_and_others_kept() -> None:
    out = io.StringIO()
    configure_logging("apiserver", formatter="json", stream=out)
    route_to_structlog(NAMES, level=logging.WARNING)

    logging.getLogger("asyncio").info("Using selector: %s", "EpollSelector")
    logging.getLogger("asyncio").warning("slow callback took %.1f s", 0.2)

    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["event"] for line in lines] == ["slow callback took 0.2 s"]
