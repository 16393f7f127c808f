"""EmulatorServer: the Kubernetes emulator on a loopback port, in a background thread, so
synchronous clients (the official `kubernetes` client) can call it from a test.
"""

from __future__ import annotations

import asyncio
import threading

import kmock
import kubernetes.client

from brupop.adapters.kubernetes.cluster import bounded
from tests.support.kube_emulator import KubeEmulator


class EmulatorServer:
    """Runs a KubeEmulator on a loopback port in a background thread, for synchronous clients."""

    def __init__(self, emulator: KubeEmulator | None = None) -> None:
        # Not `emulator or ...`: an emulator that has served no request yet is falsy (empty).
        self.emulator = emulator if emulator is not None else KubeEmulator()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, name="kube-emulator", daemon=True)
        self.url = ""

    def __enter__(self) -> EmulatorServer:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the Kubernetes emulator did not start")
        return self

    def __exit__(self, *_: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def api_client(self) -> kubernetes.client.ApiClient:
        """An official-client ApiClient pointed at this emulator."""
        config = bounded(kubernetes.client.Configuration())
        config.host = self.url
        return kubernetes.client.ApiClient(config)

    def _run(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with self.emulator, kmock.Server(self.emulator) as server:
            self.url = str(server.url).rstrip("/")
            self._ready.set()
            await self._stop.wait()
