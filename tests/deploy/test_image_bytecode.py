"""The images ship bytecode for every module their processes load. The root is read-only, so a
module without its `.pyc` would be compiled again at every start: under the agent's `cpu: 10m`,
stringprep's tables alone would be 100 ms of CPU, ten seconds of a node's reboot.

The release compiles what importing each image's entrypoints loads (scripts/release/rootfs.py).
Here the real agent runs, as the image runs it (the `brupop` script), to its first request to a
loopback apiserver reached by name, and everything it imported on the way must be in that set.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from scripts.release import rootfs

from brupop.adapters.apiserver_http.conversion.worker_process import WORKER_MODULE
from tests.deploy.rendering import Rendered
from tests.support.polling import wait_until
from tests.support.raw_https import RawHttpsServer
from tests.support.tls import make_certificates

# Lists the modules a fresh interpreter has loaded after importing the names it is given, and
# which of those (and of the extra names on stdin) are Python source files.
LOADED = """\
import importlib, importlib.util, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""
SOURCES = """\
import importlib.util, json, sys
def source(name):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return bool(spec and spec.origin and spec.origin.endswith(".py"))
print(json.dumps([n for n in json.load(sys.stdin) if source(n)]))
"""


def _python(code: str, *args: str, stdin: str = "") -> list[str]:
    answer = subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    names: list[str] = json.loads(answer.stdout.splitlines()[-1])
    return names


def _imported_until_first_request(tmp_path: Path) -> list[str]:
    """The modules `brupop agent` imports from its start to its first request, by name."""
    certs = make_certificates(tmp_path / "tls")
    asked = threading.Event()

    def first_request(sock: socket.socket) -> None:
        sock.recv(4096)
        asked.set()

    server = RawHttpsServer(certs, first_request, host="localhost")
    token = tmp_path / "token"
    token.write_text("token")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "MY_NODE_NAME": "node-a",
        "APISERVER_URL": server.url.replace("127.0.0.1", "localhost"),
        "AGENT_TOKEN_PATH": str(token),
        "AGENT_CA_PATH": str(certs.ca_path),
        "APICLIENT_PATH": "/bin/false",
        "BRUPOP_NAMESPACE": "brupop-bottlerocket-aws",
        "TERMINATION_LOG": str(tmp_path / "termination-log"),
    }
    script = str(Path(sys.executable).parent / "brupop")
    agent = subprocess.Popen(
        [sys.executable, "-X", "importtime", script, "agent"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(asked.is_set, "the agent's first request", seconds=60)
    finally:
        agent.send_signal(signal.SIGKILL)
        _, stderr = agent.communicate(timeout=60)
        server.close()
    lines = stderr.decode("utf-8", "replace").splitlines()
    return [line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")]


def test_every_module_the_agent_loads_until_its_first_request_is_compiled_in_its_image(
    tmp_path: Path,
) -> None:
    imported = _imported_until_first_request(tmp_path)
    compiled = set(_python(LOADED, *rootfs.ENTRYPOINTS["agent"]))

    sources = _python(SOURCES, stdin=json.dumps(sorted(set(imported) - compiled)))

    assert "brupop.adapters.apiserver_client.connections" in imported  # the run got that far
    assert sources == []


def test_what_the_agents_error_paths_load_later_is_compiled_in_its_image_too() -> None:
    # A logged traceback, a mistyped command's suggestion, a missing extra's check: loaded only
    # when needed, so not by the start, and compiled all the same.
    compiled = set(_python(LOADED, *rootfs.ENTRYPOINTS["agent"]))

    assert {"traceback", "difflib", "importlib.util"} <= compiled


def test_bytecode_is_written_beside_each_source_naming_its_path_in_the_image(
    tmp_path: Path,
) -> None:
    source = tmp_path / "opt" / "brupop" / "lib" / "module.py"
    source.parent.mkdir(parents=True)
    source.write_text("ANSWER = 42\n")

    rootfs.compile_modules(tmp_path, [source])

    data = Path(importlib.util.cache_from_source(str(source))).read_bytes()
    flags = int.from_bytes(data[4:8], "little")
    assert flags == 0b01  # hash-based and unchecked: the source's time is never looked at
    assert marshal.loads(data[16:]).co_filename == "/opt/brupop/lib/module.py"


def test_optimized_bytecode_is_written_without_the_docstrings(tmp_path: Path) -> None:
    source = tmp_path / "opt" / "brupop" / "lib" / "module.py"
    source.parent.mkdir(parents=True)
    source.write_text('"""A docstring."""\nANSWER = 42\n')

    rootfs.compile_modules(tmp_path, [source], 2)

    data = Path(importlib.util.cache_from_source(str(source), optimization=2)).read_bytes()
    assert "A docstring." not in marshal.loads(data[16:]).co_consts
    assert not Path(importlib.util.cache_from_source(str(source))).exists()


def test_the_control_image_is_compiled_for_the_level_the_chart_runs_it_at(
    manifest: Rendered,
) -> None:
    level = str(rootfs.OPTIMIZATION["control"])
    for name in ("brupop-apiserver", "brupop-controller-deployment"):
        assert manifest.env("Deployment", name)["PYTHONOPTIMIZE"] == level
    assert "PYTHONOPTIMIZE" not in manifest.env("DaemonSet", "brupop-agent")
    assert rootfs.OPTIMIZATION["agent"] == 0


def test_the_control_images_bytecode_covers_the_kubernetes_client_and_the_token_libraries() -> None:
    compiled = set(_python(LOADED, *rootfs.ENTRYPOINTS["control"]))

    assert {"kubernetes.client", "brupop.adapters.kubernetes.cluster", "jwt"} <= compiled
    assert WORKER_MODULE in compiled  # started by the apiserver for its first large review
