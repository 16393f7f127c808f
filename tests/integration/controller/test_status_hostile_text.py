"""`brupop status` shows what a hostile cluster wrote without letting it drive the terminal:
escape sequences (title, clipboard, cursor moves), C1 controls and bidi overrides are taken
out of the table, the policy line and the JSON alike."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brupop.cli.status.main import main
from tests.support.odd_json import deep_json, json_values, raw_bytes
from tests.support.probe_server import ProbeServer

FORBIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
TITLE = "\x1b]0;pwned\x07"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4=\x07"
OVERWRITE = "\r\x1b[2K\x1b[1Aall nodes healthy"


def _document() -> dict[str, object]:
    row = {
        "node": f"node-a{TITLE}",
        "state": "MonitoringUpdate",
        "version": "1.20.0\u202e",
        "target_state": "Idle",
        "target_version": "1.20.0",
        "crash_count": 0,
        "detail": f"GET http://10.0.0.1/ failed: {CLIPBOARD}boom{OVERWRITE}\x9b2J",
    }
    policy = {"name": "default", "phase": "Blocked", "message": f"Prometheus says {TITLE}no"}
    return {"nodes": [row], "policy": policy, "leader": True}


@pytest.mark.parametrize("output", ["table", "json"])
def test_status_output_carries_no_terminal_control_from_the_cluster(
    output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with ProbeServer() as server:
        server.answers["/status"] = (200, json.dumps(_document()).encode())
        code = main(["--url", server.base_url, "-o", output])
    printed = capsys.readouterr()

    assert code == 0
    assert FORBIDDEN.search(printed.out) is None
    assert "\x1b" not in printed.out and "\\u001b" not in printed.out
    if output == "table":
        assert "boom all nodes healthy" in printed.out  # shown, but on its own line no more
        assert printed.out.startswith("Policy default: Blocked - Prometheus says no")


def test_an_error_from_the_controller_is_shown_without_its_controls(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with ProbeServer() as server:
        server.answers["/status"] = (500, f"{TITLE}oops{OVERWRITE}".encode())
        code = main(["--url", server.base_url])
    printed = capsys.readouterr()

    assert code == 1
    assert FORBIDDEN.search(printed.err) is None and "\x1b" not in printed.err


@pytest.fixture(scope="module")
def status_server() -> Iterator[ProbeServer]:
    with ProbeServer() as server:
        yield server


@settings(
    max_examples=80, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    body=st.one_of(
        json_values.map(lambda value: json.dumps(value).encode()),
        st.fixed_dictionaries({"nodes": json_values, "policy": json_values}).map(
            lambda value: json.dumps(value).encode()
        ),
        deep_json,
        raw_bytes,
    ),
    output=st.sampled_from(["table", "json"]),
)
def test_any_answer_gives_an_exit_code_and_never_a_traceback(
    status_server: ProbeServer, body: bytes, output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status_server.answers["/status"] = (200, body)

    code = main(["--url", status_server.base_url, "-o", output])
    printed = capsys.readouterr()

    assert code in (0, 1)
    assert FORBIDDEN.search(printed.out + printed.err) is None
