"""`brupop-host-emulator serve`: the emulated host's API over HTTP on a unix socket, as
Bottlerocket's API server answers on /run/api.sock, read here with a plain HTTP client."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.update_api.emulated_host import FAST_HOST
from tests.support.polling import wait_until


class UnixConnection(http.client.HTTPConnection):
    """HTTP over a unix socket."""

    def __init__(self, path: Path) -> None:
        super().__init__("localhost", timeout=30)
        self._path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(30)
        self.sock.connect(self._path)


def environment(host_dir: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BRUPOP_SIM_")}
    return {
        **clean,
        **FAST_HOST,
        "BRUPOP_SIM_HOST_DIR": str(host_dir),
        "BRUPOP_SIM_CURRENT_VERSION": "1.0.0",
        "BRUPOP_SIM_TARGET_VERSION": "1.1.0",
    }


def serve(tmp_path: Path, *extra: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "brupop.hostsim", "serve", *extra]
    return subprocess.Popen(argv, env=environment(tmp_path / "host"), stderr=subprocess.PIPE)


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "api.sock"
    server = serve(tmp_path, "--socket", str(path))
    try:
        wait_until(path.exists, "the socket", seconds=30, interval=0.05)
        yield path
    finally:
        server.terminate()
        server.wait(timeout=30)
        assert server.stderr is not None
        server.stderr.close()


def request(path: Path, method: str, uri: str) -> tuple[int, bytes]:
    connection = UnixConnection(path)
    try:
        connection.request(method, uri)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def test_get_os_answers_the_running_release_as_json(api: Path) -> None:
    status, body = request(api, "GET", "/os")

    assert status == 200
    assert json.loads(body)["version_id"] == "1.0.0"


def test_an_unknown_route_is_404_and_a_wrong_method_405(api: Path) -> None:
    assert request(api, "GET", "/no-such-route")[0] == 404
    assert request(api, "PUT", "/os")[0] == 405


def test_before_a_refresh_the_update_status_is_uninitialized(api: Path) -> None:
    status, body = request(api, "GET", "/updates/status")

    assert status == 404
    assert b"uninitialized" in body


def test_a_reboot_without_a_reboot_command_answers_204_and_boots_again(api: Path) -> None:
    assert request(api, "POST", "/actions/reboot")[0] == 204

    state = json.loads((api.parent / "host" / "state.json").read_text())
    assert state["reboots"] == 1


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((), "Missing required argument '--socket PATH'"),
        (("--socket", "x.sock", "--bogus"), "Unknown argument '--bogus'"),
        (("--socket", "x.sock", "--reboot-command"), "Did not give a command"),
    ],
)
def test_bad_arguments_exit_2_with_one_line_and_the_usage(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    server = serve(tmp_path, *args)
    _, err = server.communicate(timeout=30)

    assert server.returncode == 2
    first = err.decode().splitlines()[0]
    assert first.startswith("brupop-host-emulator serve: ") and said in first
    assert "Usage: brupop-host-emulator serve --socket PATH" in err.decode()
