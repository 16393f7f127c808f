"""The conversion webhook over loopback HTTPS, with a worker that holds each big review until the
test releases it: while four clients flood it with big reviews, a one-shadow review (what
kube-apiserver sends, converted in the apiserver's own process) is the next one converted; and
stopping the apiserver with conversions waiting answers them 503 at once, finishes the one
converting, and logs no error or traceback."""

from __future__ import annotations

import http.client
import json
import logging
import ssl
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog.testing
from starlette.applications import Starlette
from starlette.routing import Route

from brupop.adapters.apiserver_http.conversion.worker_process import ConversionOptions
from brupop.adapters.apiserver_http.routes.conversion_webhook import ConversionRoute
from tests.integration.apiserver.conftest import Rig, RigFactory
from tests.support.polling import wait_until

# A worker that converts as the real one does, but first writes each review's uid to the order
# file and holds the review until the release file exists.
HELD_WORKER = """
import json, os, sys, time
from brupop.adapters.apiserver_http.conversion.answer import answer_to
from brupop.adapters.apiserver_http.conversion.frames import ANSWER, READY, read_frame, write_frame
order, release, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
frames_out = sys.stdout.buffer
write_frame(frames_out, READY, b"")
while (frame := read_frame(sys.stdin.buffer, limit)) is not None:
    body = frame[1]
    with open(order, "a") as lines:
        lines.write(json.loads(body)["request"]["uid"] + "\\n")
    while not os.path.exists(release):
        time.sleep(0.01)
    write_frame(frames_out, ANSWER, answer_to(body))
"""
ALARMS = ("Traceback", "Exception in ASGI application", "CancelledError")


class HeldWorker:
    """Where the held worker writes the order of reviews, and how the test releases them."""

    def __init__(self, directory: Path) -> None:
        self.order_path = directory / "order"
        self.release_path = directory / "release"

    def options(self) -> ConversionOptions:
        limit = str(ConversionOptions().body_limit)
        script = (sys.executable, "-c", HELD_WORKER, str(self.order_path), str(self.release_path))
        return ConversionOptions(command=(*script, limit), seconds=60)

    def order(self) -> list[str]:
        return self.order_path.read_text().split() if self.order_path.exists() else []

    def release(self) -> None:
        self.release_path.touch()


def shadow(index: int, padding: int) -> dict[str, Any]:
    return {
        "apiVersion": "brupop.bottlerocket.aws/v2",
        "kind": "BottlerocketShadow",
        "metadata": {
            "name": f"brs-node-{index}",
            "namespace": "brupop-bottlerocket-aws",
            "annotations": {"note": "x" * padding},
        },
        "spec": {"state": "Idle", "version": "1.20.3"},
        "status": {
            "current_version": "1.20.3",
            "target_version": "1.20.3",
            "current_state": "Idle",
        },
    }


def review(uid: str, objects: int, padding: int = 0) -> bytes:
    request = {
        "uid": uid,
        "desiredAPIVersion": "brupop.bottlerocket.aws/v1",
        "objects": [shadow(index, padding) for index in range(objects)],
    }
    return json.dumps({"apiVersion": "apiextensions.k8s.io/v1", "request": request}).encode()


def big_review(uid: str) -> bytes:
    """About 1.8 MB: 1,000 shadows of about 1.8 KB, within every bound."""
    return review(uid, 1000, padding=1500)


def conversion_route(rig: Rig) -> ConversionRoute:
    """The running app's `/crdconvert` route object (to see how many reviews wait)."""
    app = rig.server.server.config.app
    assert isinstance(app, Starlette)
    for route in app.routes:
        if isinstance(route, Route) and route.path == "/crdconvert":
            owner = getattr(route.endpoint, "__self__", None)
            assert isinstance(owner, ConversionRoute)
            return owner
    raise AssertionError("no /crdconvert route")


def post(rig: Rig, body: bytes, statuses: dict[str, int], name: str) -> None:
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    connection = http.client.HTTPSConnection(
        "127.0.0.1", rig.server.port, context=context, timeout=60
    )
    try:
        connection.request("POST", "/crdconvert", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        statuses[name] = response.status
    except OSError as error:
        statuses[name] = -1
        raise AssertionError(f"{name}: {error}") from None
    finally:
        connection.close()


def in_background(rig: Rig, body: bytes, statuses: dict[str, int], name: str) -> threading.Thread:
    thread = threading.Thread(target=post, args=(rig, body, statuses, name), daemon=True)
    thread.start()
    return thread


@pytest.fixture
def held(tmp_path: Path) -> HeldWorker:
    return HeldWorker(tmp_path)


@pytest.fixture
def alarms(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> Iterator[Callable[[], list[str]]]:
    """Every warning, error or traceback the server has written so far."""
    caplog.set_level(logging.INFO)
    with structlog.testing.capture_logs() as events:

        def found() -> list[str]:
            lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
            lines += [str(e) for e in events if e.get("log_level") in ("warning", "error")]
            out, err = capfd.readouterr()
            return lines + [alarm for alarm in ALARMS if alarm in caplog.text + out + err]

        yield found


def test_a_one_shadow_review_is_converted_next_while_four_clients_flood_big_reviews(
    make_rig: RigFactory, held: HeldWorker
) -> None:
    rig = make_rig(conversion=held.options())
    route = conversion_route(rig)
    statuses: dict[str, int] = {}
    flood = [in_background(rig, big_review(f"big-{n}"), statuses, f"big-{n}") for n in range(4)]
    # Two big reviews are in (one converting, one waiting for the worker), two wait to be read.
    wait_until(lambda: len(held.order()) == 1, "the worker to take a big review")
    wait_until(lambda: route.waiting_for_worker() == 1, "a second big review to wait")

    shadow_review = in_background(rig, review("shadow", 1), statuses, "shadow")
    wait_until(lambda: route.waiting_for_worker() == 2, "the one-shadow review to wait")
    held.release()
    shadow_review.join(30)
    for thread in flood:
        thread.join(30)

    # Answered before any big review converted but the one converting when it came (in order
    # of answer); never in the worker.
    answered = list(statuses)
    converted_before = [
        name for name in answered[: answered.index("shadow")] if statuses[name] == 200
    ]
    assert len(converted_before) <= 1, answered
    assert "shadow" not in held.order()
    assert statuses["shadow"] == 200
    # A big review that waited past its bound on a slow machine is told to retry; none fails.
    assert {statuses[f"big-{n}"] for n in range(4)} <= {200, 503}


def test_stopping_with_conversions_waiting_answers_them_503_and_logs_no_error(
    make_rig: RigFactory, held: HeldWorker, alarms: Callable[[], list[str]]
) -> None:
    rig = make_rig(conversion=held.options())
    route = conversion_route(rig)
    statuses: dict[str, int] = {}
    clients = [in_background(rig, big_review("converting"), statuses, "converting")]
    wait_until(lambda: held.order() == ["converting"], "the worker to take the first review")
    clients += [in_background(rig, review(f"q{n}", 1), statuses, f"q{n}") for n in range(4)]
    clients.append(in_background(rig, big_review("big"), statuses, "big"))
    wait_until(lambda: route.waiting_for_worker() == 5, "five reviews to wait for the worker")

    stopping = threading.Thread(target=rig.server.stop, kwargs={"grace_seconds": 30})
    stopping.start()
    wait_until(lambda: len(statuses) == 5, "the waiting reviews to be answered")
    answered_while_converting = dict(statuses)
    held.release()
    for thread in [*clients, stopping]:
        thread.join(30)

    assert not rig.server.thread.is_alive()
    assert answered_while_converting == {**{f"q{n}": 503 for n in range(4)}, "big": 503}
    assert statuses["converting"] == 200
    assert held.order() == ["converting"]
    assert alarms() == []
