"""`/status` is rendered again only once the last rendering is a second old, so callers at once
share one rendering however large the fleet."""

from __future__ import annotations

import json

from brupop.entrypoints.controller.http_server import RenderedStatus
from tests.unit.services.controller.fleet import Fleet


class Seconds:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def reasons(body: bytes) -> list[str]:
    return [row["reason"] for row in json.loads(body)["nodes"]]


def test_status_within_the_second_is_the_last_rendering_and_after_it_is_new() -> None:
    controller = Fleet(2).controller(1)
    seconds = Seconds()
    status = RenderedStatus(controller, clock=seconds, fresh_seconds=1.0)
    before = status()

    controller.tick()  # one node starts
    seconds.now += 0.9
    within = status()
    seconds.now += 0.1
    after = status()

    assert within is before and reasons(before) == []
    assert reasons(after) == ["starting", "concurrency_full"]
