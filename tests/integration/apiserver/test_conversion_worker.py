"""The conversion worker process: its answer is `convert_review`'s, a worker killed mid-conversion
is logged once and replaced, one over its deadline is killed and the review refused in a few
words, and a worker that cannot start makes the apiserver not ready. The apiserver starts it for
its first review larger than a shadow's; reviews of one shadow never need it."""

from __future__ import annotations

import json
import os
import signal
import ssl
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog.testing

from brupop.adapters.apiserver_http.conversion.worker_process import (
    ConversionFailedError,
    ConversionOptions,
    ConversionWorker,
)
from brupop.domain.conversion import convert_review
from brupop.services.runtime.supervisor import RestartSchedule
from tests.integration.apiserver.conftest import RigFactory, start_brupop_apiserver
from tests.integration.apiserver.raw_client import ping_soon
from tests.support.polling import wait_until
from tests.support.tls import TestCertificates

FAST_RESTARTS = RestartSchedule(first_seconds=0.05, cap_seconds=0.1, failing_after=3)
LIMIT = 1024 * 1024
# A first worker that says it is ready, takes a review in, writes its pid to the marker file
# and hangs; every later one (the marker exists) is the real worker.
FIRST_WORKER_HANGS = """
import os, runpy, sys
marker, limit = sys.argv[1], sys.argv[2]
if os.path.exists(marker):
    sys.argv = ["conversion_worker", limit]
    runpy.run_module("brupop.adapters.apiserver_http.conversion.worker", run_name="__main__")
else:
    from brupop.adapters.apiserver_http.conversion.frames import READY, write_frame
    write_frame(sys.stdout.buffer, READY, b"")
    sys.stdin.buffer.read(9)
    with open(marker + ".tmp", "w") as pid:
        pid.write(str(os.getpid()))
    os.rename(marker + ".tmp", marker)
    sys.stdin.buffer.read()
"""
# A worker that says it is ready, then reads forever and never answers.
NEVER_ANSWERS = """
import sys
from brupop.adapters.apiserver_http.conversion.frames import READY, write_frame
write_frame(sys.stdout.buffer, READY, b"")
sys.stdin.buffer.read()
"""


def review(objects: int = 3) -> dict[str, Any]:
    shadow = {
        "apiVersion": "brupop.bottlerocket.aws/v1",
        "kind": "BottlerocketShadow",
        "metadata": {"name": "brs-a", "namespace": "ns", "annotations": {"x": "é"}},
        "spec": {"state": "StagedUpdate", "version": "1.2.3"},
        "status": {"current_version": "1.2.2", "target_version": "1.2.3", "current_state": "Idle"},
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "u1",
            "desiredAPIVersion": "brupop.bottlerocket.aws/v2",
            "objects": [shadow] * objects,
        },
    }


def large_review() -> bytes:
    """A review larger than a shadow's (600 objects, about 200 KB): the worker converts it."""
    return json.dumps(review(objects=600)).encode()


def post_review(port: int, ca_path: Path, body: bytes) -> int:
    """`POST /crdconvert` to `brupop apiserver` on `port` once it answers; the status."""
    ping_soon(port, ca_path, within=60)
    context = ssl.create_default_context(cafile=str(ca_path))
    request = urllib.request.Request(f"https://localhost:{port}/crdconvert", data=body)
    try:
        with urllib.request.urlopen(request, context=context, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def _refused(convert: Any) -> None:
    """Ask `convert` for a large review, expecting a refusal."""
    try:
        convert(large_review())
    except ConversionFailedError:
        return


@pytest.fixture
def started() -> Iterator[list[ConversionWorker]]:
    """Workers started by the test; all stopped after it."""
    workers: list[ConversionWorker] = []
    yield workers
    for worker in workers:
        worker.stop()


def start_worker(started: list[ConversionWorker], **options: Any) -> ConversionWorker:
    worker = ConversionWorker(ConversionOptions(body_limit=LIMIT, restart=FAST_RESTARTS, **options))
    started.append(worker)
    worker.start()
    return worker


def is_running(pid: int) -> bool:
    """The process exists and is no zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_the_worker_answers_as_convert_review_does(started: list[ConversionWorker]) -> None:
    worker = start_worker(started)
    sent = review(objects=500)

    answer = worker.convert(json.dumps(sent).encode())

    assert json.loads(answer) == convert_review(sent)


def test_a_body_that_is_not_json_is_refused_with_a_400(started: list[ConversionWorker]) -> None:
    worker = start_worker(started)

    with pytest.raises(ConversionFailedError, match="not valid JSON") as refused:
        worker.convert(b'{"apiVersion": ')

    assert refused.value.status == 400


def test_a_worker_killed_mid_conversion_is_logged_once_and_replaced_and_the_next_review_converts(
    started: list[ConversionWorker], tmp_path: Path
) -> None:
    marker = tmp_path / "first-worker"
    command = (sys.executable, "-c", FIRST_WORKER_HANGS, str(marker), str(LIMIT))
    worker = start_worker(started, command=command, seconds=60)
    outcome: list[BaseException] = []

    def convert_in_background() -> None:
        try:
            worker.convert(json.dumps(review()).encode())
        except ConversionFailedError as error:
            outcome.append(error)

    with structlog.testing.capture_logs() as logs:
        converting = threading.Thread(target=convert_in_background)
        converting.start()
        wait_until(marker.exists, "the first worker to take the review in", interval=0.02)
        first = int(marker.read_text())
        os.kill(first, signal.SIGKILL)
        converting.join(30)
        sent = review()
        answer = worker.convert(json.dumps(sent).encode())

    assert [str(error) for error in outcome] == ["the conversion worker stopped; retry"]
    assert isinstance(outcome[0], ConversionFailedError) and outcome[0].status == 503
    assert json.loads(answer) == convert_review(sent)
    assert worker.pid is not None and worker.pid != first
    failures = [entry for entry in logs if entry["log_level"] == "error"]
    assert len(failures) == 1
    assert failures[0]["loop"] == "conversion-worker"
    assert failures[0]["reason"] == "the conversion worker exited (killed by signal 9)"


def test_a_conversion_over_its_deadline_is_refused_in_a_few_words_and_its_worker_replaced(
    started: list[ConversionWorker],
) -> None:
    command = (sys.executable, "-c", NEVER_ANSWERS)
    worker = start_worker(started, command=command, seconds=0.5)
    wait_until(lambda: worker.pid is not None, "the worker to start", interval=0.02)
    first = worker.pid
    assert first is not None

    with structlog.testing.capture_logs() as logs, pytest.raises(ConversionFailedError) as refused:
        worker.convert(json.dumps(review(objects=2000)).encode())  # more than a pipe holds

    assert (refused.value.status, str(refused.value)) == (503, "the conversion took too long")
    wait_until(lambda: not is_running(first), "the late worker to be killed", interval=0.02)
    wait_until(lambda: worker.pid not in (None, first), "a new worker", interval=0.02)
    assert [entry["event"] for entry in logs if entry["log_level"] != "debug"] == [
        "conversion.deadline_exceeded"
    ]
    assert not worker.failing


def test_stopping_leaves_no_worker_process(started: list[ConversionWorker]) -> None:
    worker = start_worker(started)
    wait_until(lambda: worker.pid is not None, "the worker to start", interval=0.02)
    pid = worker.pid
    assert pid is not None

    worker.stop()

    assert not is_running(pid)
    with pytest.raises(ConversionFailedError, match="not running"):
        worker.convert(b"{}")


def children_of(pid: int) -> list[int]:
    """`pid`'s child processes (whichever of its threads started them)."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found.extend(int(child) for child in children.read_text().split())
        except OSError:
            continue
    return found


def test_an_apiserver_that_converts_only_shadows_starts_no_worker_process(
    certs: TestCertificates,
) -> None:
    process, port = start_brupop_apiserver(certs)
    try:
        assert post_review(port, certs.ca_path, json.dumps(review(objects=1)).encode()) == 200
        assert children_of(process.pid) == []
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


def test_sigterm_stops_the_apiserver_and_leaves_no_worker_process(
    certs: TestCertificates,
) -> None:
    process, port = start_brupop_apiserver(certs)
    try:
        assert post_review(port, certs.ca_path, large_review()) == 200
        wait_until(
            lambda: children_of(process.pid), "the apiserver's conversion worker", interval=0.02
        )
        workers = children_of(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=30)

    assert process.returncode == 0, err
    assert b"Traceback" not in err
    assert [pid for pid in workers if is_running(pid)] == []


def test_a_killed_apiserver_leaves_no_worker_process_either(certs: TestCertificates) -> None:
    process, port = start_brupop_apiserver(certs)
    try:
        assert post_review(port, certs.ca_path, large_review()) == 200
        wait_until(
            lambda: children_of(process.pid), "the apiserver's conversion worker", interval=0.02
        )
        workers = children_of(process.pid)
    finally:
        process.kill()
        process.communicate(timeout=30)

    # Its input ends with the apiserver: the worker exits by itself.
    wait_until(
        lambda: not any(is_running(pid) for pid in workers),
        "the orphaned worker to exit",
        interval=0.02,
    )


def test_a_worker_that_cannot_start_makes_the_apiserver_not_ready(make_rig: RigFactory) -> None:
    cannot_start = ConversionOptions(
        command=(sys.executable, "-c", "raise SystemExit(3)"), restart=FAST_RESTARTS
    )
    with structlog.testing.capture_logs() as logs:
        rig = make_rig(conversion=cannot_start)
        # Its first large review starts the worker, which fails to start.
        threading.Thread(target=_refused, args=(rig.conversion.convert,), daemon=True).start()
        wait_until(
            lambda: rig.conversion.failing,
            "the worker's supervisor to give up",
            interval=0.02,
        )
    context = ssl.create_default_context(cafile=str(rig.certs.ca_path))

    def fetch(path: str, body: bytes | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(rig.server.base_url + path, data=body)
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    assert fetch("/readyz") == (503, b"not ready: the conversion worker keeps failing\n")
    status, answer = fetch("/crdconvert", large_review())
    assert (status, json.loads(answer)) == (503, {"error": "the conversion worker is not running"})
    status, _ = fetch("/crdconvert", json.dumps(review(objects=1)).encode())
    assert status == 200  # a shadow's own review needs no worker
    failures = [entry for entry in logs if entry["log_level"] == "error"]
    assert [entry["reason"] for entry in failures] == [
        "the conversion worker did not start (exit code 3)"
    ]
