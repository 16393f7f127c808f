"""The controller's loop says at debug why each pass runs: the watch whose change woke it, or
its wait ending, so a loop that passes many times a second shows in its log what drives it."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from structlog.testing import capture_logs

from brupop.domain.states import UpdateState
from tests.integration.controller.running import running
from tests.integration.controller.test_controller_loop import (
    NEVER,
    PATIENCE,
    _cluster,
    _controller,
    _started,
    _wait_for,
)


def _pass_due(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [line for line in list(logs) if line["event"] == "controller.pass_due"]


def test_a_pass_woken_by_a_shadow_change_names_the_shadows_watch() -> None:
    cluster = _cluster(1)
    with capture_logs() as logs:
        controller = _controller(cluster, 1, tick=NEVER)
        with running(controller):
            _wait_for(lambda: _started(cluster) == 1, PATIENCE)
            shadow = cluster.shadows.get("brs-node-00")
            assert shadow.status is not None
            reached = shadow.status.model_copy(
                update={"current_state": UpdateState.STAGED_AND_PERFORMED_UPDATE}
            )
            cluster.shadows.update_status(shadow.name, reached)
            _wait_for(
                lambda: any("shadows" in line["woken_by"] for line in _pass_due(logs)), PATIENCE
            )
    assert all(line["log_level"] == "debug" for line in _pass_due(logs))


def test_a_pass_nothing_woke_names_no_watch_and_the_lease_due() -> None:
    cluster = _cluster(1)
    with capture_logs() as logs:
        controller = _controller(cluster, 1, tick=NEVER, renew=0.5)
        with running(controller):
            _wait_for(lambda: _started(cluster) == 1, PATIENCE)
            seen = len(_pass_due(logs))
            _wait_for(lambda: len(_pass_due(logs)) >= seen + 4, PATIENCE)
    quiet = [line for line in _pass_due(logs)[seen:] if not line["woken_by"]]
    assert quiet, "a renewal's pass, with nothing changed, names no watch"
    assert all(0 <= line["lease_due_seconds"] <= 0.5 for line in quiet)
