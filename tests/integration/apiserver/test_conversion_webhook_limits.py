"""`/crdconvert` needs no token, so its limits protect everyone: a flood of big reviews leaves
`/ping` and the agents answered, an oversized review is refused, and so are objects more, larger
or deeper than shadows can be; a review cut short is a 400."""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import os
import signal
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from brupop.adapters.apiserver_http.conversion.worker_process import WORKER_MODULE
from tests.integration.apiserver.conftest import Rig
from tests.support.polling import wait_until

V2 = "brupop.bottlerocket.aws/v2"


def shadow(index: int, padding: int = 0) -> dict[str, Any]:
    node = f"ip-10-0-{index}.us-west-2.compute.internal"
    return {
        "apiVersion": V2,
        "kind": "BottlerocketShadow",
        "metadata": {
            "name": f"brs-{node}",
            "namespace": "brupop-bottlerocket-aws",
            "uid": f"0d0d0d0d-aaaa-bbbb-cccc-{index:012d}",
            "resourceVersion": "123456",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": "u"}],
            "annotations": {"note": "x" * padding},
        },
        "spec": {"state": "Idle", "version": "1.20.3"},
        "status": {
            "current_version": "1.20.3",
            "target_version": "1.20.3",
            "current_state": "Idle",
            "crash_count": 0,
        },
    }


def review_body(objects: int, padding: int = 0) -> bytes:
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "r1",
            "desiredAPIVersion": "brupop.bottlerocket.aws/v1",
            "objects": [shadow(index, padding) for index in range(objects)],
        },
    }
    return json.dumps(review).encode()


def connect(rig: Rig, timeout: float = 30.0) -> http.client.HTTPSConnection:
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    return http.client.HTTPSConnection(
        "127.0.0.1", rig.server.port, context=context, timeout=timeout
    )


def post_review(rig: Rig, body: bytes) -> tuple[int, bytes]:
    connection = connect(rig)
    try:
        connection.request("POST", "/crdconvert", body, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@contextmanager
def flood_of_reviews(rig: Rig, body: bytes, clients: int) -> Iterator[list[int]]:
    """`clients` threads posting `body` over and over until the block ends; yields the statuses."""
    statuses: list[int] = []
    stop = threading.Event()

    def post_until_stopped() -> None:
        connection = connect(rig)
        try:
            while not stop.is_set():
                connection.request("POST", "/crdconvert", body)
                response = connection.getresponse()
                response.read()
                statuses.append(response.status)
        except OSError:
            return
        finally:
            connection.close()

    threads = [threading.Thread(target=post_until_stopped, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    try:
        wait_until(lambda: len(statuses) >= clients, "the flood's first answers")
        yield statuses
    finally:
        stop.set()
        for thread in threads:
            thread.join(30)


def conversion_workers() -> list[int]:
    """The conversion worker processes this test process's apiserver started."""
    found: list[int] = []
    for children in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        for child in children.read_text().split():
            with contextlib.suppress(OSError):
                if WORKER_MODULE.encode() in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(int(child))
    return found


def test_ping_and_an_agent_are_answered_while_the_conversion_worker_holds_big_reviews(
    rig: Rig,
) -> None:
    agent = rig.client("n1")
    agent.create()
    ping = connect(rig, timeout=10)
    body = review_body(1000, padding=1300)  # about 1.9 MB: under the body limit
    with flood_of_reviews(rig, body, clients=6) as statuses:
        wait_until(lambda: 200 in statuses, "a big review converted by the worker")
        (worker,) = conversion_workers()
        os.kill(worker, signal.SIGSTOP)  # its conversions hold until their 10 s deadline
        try:
            ping.request("GET", "/ping")
            pong = ping.getresponse().read()
            agent.get()
            # Answered while the worker still held them: it was not replaced at their deadline.
            assert conversion_workers() == [worker]
        finally:
            os.kill(worker, signal.SIGCONT)

    ping.close()
    assert pong == b"pong"
    assert statuses and set(statuses) <= {200, 503}


def test_a_review_larger_than_a_shadow_list_is_refused_with_413(rig: Rig) -> None:
    body = review_body(1000, padding=2000)  # about 2.5 MB: more than 1,000 shadows can be
    assert len(body) > 2 * 1024 * 1024

    status, answer = post_review(rig, body)

    assert status == 413
    assert json.loads(answer) == {"error": "request body too large"}


def test_a_review_of_more_objects_than_a_batch_is_refused_with_413_and_why(rig: Rig) -> None:
    status, answer = post_review(rig, review_body(1001))

    assert status == 413
    assert json.loads(answer) == {
        "error": "the review holds 1001 objects; at most 1000 are converted at once"
    }


def test_an_object_larger_than_a_shadow_is_refused_with_413_and_why(rig: Rig) -> None:
    status, answer = post_review(rig, review_body(1, padding=64 * 1024))

    assert status == 413
    assert json.loads(answer)["error"].startswith("objects[0] is ")


@pytest.mark.parametrize("depth", [900, 100_000])
def test_an_object_nested_deeper_than_a_shadow_is_a_400_and_why(rig: Rig, depth: int) -> None:
    one = json.dumps(shadow(0))[:-1] + ', "extra": ' + '{"a":' * depth + "1" + "}" * depth + "}"
    body = '{"request": {"uid": "r1", "desiredAPIVersion": "brupop.bottlerocket.aws/v1", '
    body += '"objects": [' + one + "]}}"

    status, answer = post_review(rig, body.encode())

    assert status == 400
    assert json.loads(answer) == {
        "error": "the review is nested deeper than a shadow can be (32 levels)"
    }


def test_a_review_within_the_limit_is_converted(rig: Rig) -> None:
    status, answer = post_review(rig, review_body(3))

    assert status == 200
    response = json.loads(answer)["response"]
    assert response["result"]["status"] == "Success"
    assert [o["apiVersion"] for o in response["convertedObjects"]] == [
        "brupop.bottlerocket.aws/v1"
    ] * 3


def test_a_review_cut_short_is_a_400_without_a_traceback(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))
    with (
        socket.create_connection(("127.0.0.1", rig.server.port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        tls.sendall(
            b"POST /crdconvert HTTP/1.1\r\nHost: brupop\r\nContent-Length: 100000\r\n\r\n"
            b'{"apiVersion": "apiextensions'
        )
    caplog.set_level(logging.DEBUG)
    agent = rig.client("n1")
    agent.create()  # the server has moved on
    wait_until(
        lambda: b'route="/crdconvert",status="400"' in metrics(rig),
        "the cut-short review answered 400",
        interval=0.05,
    )

    assert b'route="/crdconvert",status="500"' not in metrics(rig)
    assert not [record for record in caplog.records if record.exc_info]


def metrics(rig: Rig) -> bytes:
    connection = connect(rig, timeout=5)
    try:
        connection.request("GET", "/metrics")
        return connection.getresponse().read()
    finally:
        connection.close()


def test_refused_reviews_are_logged_the_first_time_not_once_each(rig: Rig) -> None:
    many = review_body(1_001)
    with capture_logs() as logs:
        answers = [post_review(rig, many)[0] for _ in range(5)]

    assert answers == [413] * 5
    refused = [line for line in logs if line["event"] == "conversion.refused"]
    assert [(line["status"], line["refused"]) for line in refused] == [(413, 1)]
