"""The Kubernetes API emulator in a process of its own, for tests whose processes call it.

In the test's process, the emulator's thread competes with the test for the interpreter's lock:
on a loaded machine its answers came too late for the processes under test. Here it has its
own interpreter. A setup function (`module:function`, called in the child with the emulator and
a work directory) writes the objects and the reactions; the test reads back through a snapshot.

Protocol: the child writes its URL to `<work_dir>/emulator.url` once it listens, then reads
commands on stdin, one a line: `snapshot PATH` writes the requests, objects and the setup's facts
as JSON to PATH. End of stdin stops it.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kmock
import kubernetes.client

from brupop.adapters.kubernetes.cluster import bounded
from tests.support.kube_api_rules import KINDS, Kind
from tests.support.kube_emulator import KubeEmulator
from tests.support.polling import wait_until

Setup = Callable[[KubeEmulator, Path], Callable[[], dict[str, Any]] | None]
"""Writes the objects and reactions; may return what to add to every snapshot (`facts`)."""

START_SECONDS = 60.0
_STOP_SECONDS = 10.0
URL_FILE = "emulator.url"


@dataclass(frozen=True)
class Recorded:
    """One request the emulator answered, as much of it as tests look at."""

    method: str
    path: str
    params: dict[str, str]
    data: Any


@dataclass(frozen=True)
class Snapshot:
    """The emulator's state at one moment: what it was asked, what it stores."""

    requests: list[Recorded]
    objects: dict[str, list[dict[str, Any]]]
    facts: dict[str, Any]

    def objects_of(self, kind: Kind) -> list[dict[str, Any]]:
        return self.objects.get(_kind_key(kind), [])

    def stored(self, kind: Kind, namespace: str | None, name: str) -> dict[str, Any] | None:
        for obj in self.objects_of(kind):
            meta = obj["metadata"]
            if meta["name"] == name and meta.get("namespace") == namespace:
                return obj
        return None

    def requests_to(self, method: str, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.method == method and r.path == path]


class EmulatorProcess:
    """Starts the child, waits until it answers, takes snapshots, stops it."""

    def __init__(self, setup: str, work_dir: Path) -> None:
        self._setup, self._work_dir = setup, work_dir
        self._log = work_dir / "emulator.log"
        self._process: subprocess.Popen[str] | None = None
        self._snapshots = 0
        self.url = ""

    def __enter__(self) -> EmulatorProcess:
        self._work_dir.mkdir(parents=True, exist_ok=True)
        with self._log.open("w") as log:
            self._process = subprocess.Popen(
                [sys.executable, "-m", __name__, self._setup, str(self._work_dir)],
                stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
        url_file = self._work_dir / URL_FILE
        wait_until(
            lambda: self._alive() and url_file.exists(),
            f"the emulator's URL\n{self.tail()}",
            seconds=START_SECONDS,
            interval=0.05,
        )
        self.url = url_file.read_text().strip()
        wait_until(self._answers, f"the emulator answering\n{self.tail()}", seconds=START_SECONDS)
        return self

    def __exit__(self, *_: object) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(_STOP_SECONDS)

    def api_client(self) -> kubernetes.client.ApiClient:
        """An official-client ApiClient pointed at the emulator."""
        config = bounded(kubernetes.client.Configuration())
        config.host = self.url
        return kubernetes.client.ApiClient(config)

    def snapshot(self, seconds: float = START_SECONDS) -> Snapshot:
        """The emulator's requests, objects and facts now (asked over stdin, read from a file)."""
        self._snapshots += 1
        path = self._work_dir / f"snapshot-{self._snapshots}.json"
        process = self._process
        assert process is not None and process.stdin is not None
        process.stdin.write(f"snapshot {path}\n")
        process.stdin.flush()
        wait_until(path.exists, f"the emulator's snapshot\n{self.tail()}", seconds=seconds)
        raw = json.loads(path.read_text())
        return Snapshot(
            requests=[Recorded(**request) for request in raw["requests"]],
            objects=raw["objects"],
            facts=raw["facts"],
        )

    def tail(self, lines: int = 30) -> str:
        text = self._log.read_text(errors="replace") if self._log.exists() else ""
        return "--- emulator\n" + "\n".join(text.splitlines()[-lines:])

    def _alive(self) -> bool:
        assert self._process is not None
        exited = self._process.poll()
        assert exited is None, f"the emulator exited {exited}\n{self.tail()}"
        return True

    def _answers(self) -> bool:
        self._alive()
        try:
            with urllib.request.urlopen(f"{self.url}/version", timeout=2) as reply:
                return bool(reply.status == 200)
        except OSError:
            return False


def _kind_key(kind: Kind) -> str:
    return f"{kind.group}/{kind.version}/{kind.plural}"


def _recorded(request: kmock.Request) -> dict[str, Any]:
    data = request.data if isinstance(request.data, dict | list) else None
    return {
        "method": str(request.method.value).upper(),
        "path": request.url.path,
        "params": {key: str(value) for key, value in request.params.items()},
        "data": data,
    }


def _snapshot(emulator: KubeEmulator, facts: Callable[[], dict[str, Any]] | None) -> str:
    return json.dumps(
        {
            "requests": [_recorded(request) for request in emulator.requests],
            "objects": {_kind_key(kind): emulator.objects_of(kind) for kind in KINDS.values()},
            "facts": facts() if facts is not None else {},
        }
    )


def _load_setup(spec: str) -> Setup:
    module, _, name = spec.partition(":")
    setup: Setup = getattr(importlib.import_module(module), name)
    return setup


async def _serve(setup: Setup, work_dir: Path) -> None:
    emulator = KubeEmulator()
    facts = setup(emulator, work_dir)
    loop = asyncio.get_running_loop()
    async with emulator, kmock.Server(emulator) as server:
        written = work_dir / f"{URL_FILE}.part"
        written.write_text(str(server.url).rstrip("/"))
        written.rename(work_dir / URL_FILE)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            command, _, argument = line.strip().partition(" ")
            if command == "snapshot":
                target = Path(argument)
                target.with_suffix(".part").write_text(_snapshot(emulator, facts))
                target.with_suffix(".part").rename(target)


def main(argv: list[str]) -> int:
    setup, work_dir = argv
    asyncio.run(_serve(_load_setup(setup), Path(work_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
