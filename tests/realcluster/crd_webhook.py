"""brupop's CRDs on the real control plane, the shadow's conversion webhook served by a brupop
apiserver on loopback (over the in-memory cluster: kube-apiserver only calls `/crdconvert`).

The worker in it is the real one, noting what each ConversionReview carried, so tests can say
what kube-apiserver sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dependency_injector import providers
from kubernetes import client

from brupop.adapters.apiserver_http.app import ApiserverOptions
from brupop.adapters.apiserver_http.conversion.worker_process import (
    ConversionOptions,
    ConversionWorker,
)
from brupop.adapters.apiserver_http.serving.server import serve_in_thread
from brupop.adapters.memory.cluster import InMemoryCluster
from brupop.cli.crd.install import install_crds, webhook_crds
from brupop.entrypoints.apiserver.container import ApiserverContainer
from tests.support.polling import wait_until
from tests.support.tls import make_certificates

GROUP = "brupop.bottlerocket.aws"
SHADOWS = "bottlerocketshadows"
POLICIES = "bottlerocketupdatepolicies"
JSON = dict[str, Any]


@dataclass(frozen=True)
class Review:
    """One ConversionReview kube-apiserver sent: its size and how many objects it carried."""

    body_bytes: int
    objects: int


class RecordingWorker(ConversionWorker):
    """The real conversion worker, noting every review it is asked to convert."""

    def __init__(self, options: ConversionOptions) -> None:
        super().__init__(options)
        self._noted = threading.Lock()
        self.reviews: list[Review] = []

    def convert(self, body: bytes) -> bytes:
        request = json.loads(body).get("request") or {}
        with self._noted:
            self.reviews.append(Review(len(body), len(request.get("objects") or [])))
        return super().convert(body)

    def reviews_since(self, start: int) -> list[Review]:
        with self._noted:
            return self.reviews[start:]


@dataclass(frozen=True)
class InstalledCrds:
    """Both CRDs installed, the webhook's worker, and a client for custom objects."""

    worker: RecordingWorker
    objects: client.CustomObjectsApi


def installed_crds(api: client.ApiClient, folder: Path) -> Iterator[InstalledCrds]:
    """Serve the webhook on loopback, install the CRDs pointing at it; remove both after."""
    certs = make_certificates(folder)
    worker = RecordingWorker(ConversionOptions())
    container = ApiserverContainer(options=ApiserverOptions())
    container.cluster.override(InMemoryCluster("brupop-bottlerocket-aws"))
    container.conversion.override(providers.Object(worker))
    server = serve_in_thread(
        container.app(), certfile=certs.cert_path, keyfile=certs.key_path, cert_check_seconds=0
    )
    extensions = client.ApiextensionsV1Api(api)
    try:
        install_crds(api, f"{server.base_url}/crdconvert", certs.ca_path.read_bytes())
        yield InstalledCrds(worker, client.CustomObjectsApi(api))
    finally:
        names = [crd["metadata"]["name"] for crd in webhook_crds("https://unused", b"")]
        for name in names:
            extensions.delete_custom_resource_definition(name)
        # kube-apiserver deletes the shadows first; its v1 cache converts those deletions.
        wait_until(lambda: not _any_left(extensions, names), "CRDs deleted", seconds=60)
        server.stop()


def _any_left(extensions: client.ApiextensionsV1Api, names: list[str]) -> bool:
    listed = extensions.list_custom_resource_definition().items
    return any(crd.metadata.name in names for crd in listed)


def shadow_object(name: str, spec: dict[str, Any], *, version: str, **metadata: Any) -> JSON:
    """A shadow object of `version` (its status is written through the status subresource)."""
    return {
        "apiVersion": f"{GROUP}/{version}",
        "kind": "BottlerocketShadow",
        "metadata": {"name": name, **metadata},
        "spec": spec,
    }
