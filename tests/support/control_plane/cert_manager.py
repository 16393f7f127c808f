"""cert-manager (controller, cainjector, webhook) as host processes against a running control
plane in DIR: its CRDs applied from its own release, its webhook on 127.0.0.1 with a serving
certificate from the control plane's CA and registered with kube-apiserver, and each process
recorded in DIR/run like the control plane's, so `down` stops them.

`start(root, cache)` is what `up --real-nodes` calls; `stop(root)` undoes it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.control_plane import probes, processes
from tests.support.control_plane.cert_manager_build import CertManagerCache
from tests.support.control_plane.cert_manager_webhooks import (
    apply_crds,
    delete_webhooks,
    register_webhooks,
)
from tests.support.control_plane.components import Ports
from tests.support.control_plane.pki import MASTERS, Pki, issue, name_of, write_kubeconfig
from tests.support.control_plane.processes import RunFolder, is_ours, log_tail
from tests.support.control_plane.versions import Cache
from tests.support.ports import free_port

NAMES = ("cert-manager-webhook", "cert-manager-controller", "cert-manager-cainjector")
CLIENT = "cert-manager"
WEBHOOK_CERT = "cert-manager-webhook"
READY_SECONDS = 120.0
BIND_ATTEMPTS = 4
CONTROLLER_STARTED = "controllers started"
INJECTOR_STARTED = "Starting workers"


class CertManagerFailure(Exception):
    """cert-manager could not be started; the message is one line plus a log tail."""


def start(root: Path, cache: Cache) -> None:
    """Start the webhook, controller and cainjector in DIR and wait until each is ready."""
    binaries = CertManagerCache(cache.root)
    missing = binaries.missing()
    if missing:
        raise CertManagerFailure(
            f"{', '.join(missing)} not built in {binaries.home}: run `scripts/control-plane build "
            "--real-nodes`"
        )
    pki = Pki(root / "pki")
    server = Ports.load(root / "ports.json").server
    kubeconfig = credentials(root, pki, server)
    apply_crds(root / "kubeconfig", binaries.crds)
    folder = RunFolder(root)
    port = start_webhook(folder, binaries.binary("webhook"), kubeconfig, pki)
    register_webhooks(root / "kubeconfig", port, pki.ca)
    controller = [str(binaries.binary("controller")), f"--kubeconfig={kubeconfig}"]
    launch(folder, "cert-manager-controller", controller, logged(folder, "cert-manager-controller"))
    injector = [str(binaries.binary("cainjector")), f"--kubeconfig={kubeconfig}"]
    launch(folder, "cert-manager-cainjector", injector, logged(folder, "cert-manager-cainjector"))


def stop(root: Path) -> None:
    """Unregister the webhook (while the API still answers) and stop the three processes."""
    with contextlib.suppress(Exception):  # best effort: `down` may stop the API server first
        delete_webhooks(root / "kubeconfig")
    folder = RunFolder(root)
    for name in reversed(NAMES):
        record = folder.read(name)
        if record is not None:
            processes.stop(folder, record)


def credentials(root: Path, pki: Pki, server: str) -> Path:
    """A client certificate and kubeconfig for cert-manager, and the webhook's serving
    certificate for 127.0.0.1, both signed by the control plane's CA."""
    ca_cert = x509.load_pem_x509_certificate(pki.ca.read_bytes())
    ca_key = serialization.load_pem_private_key(pki.key("ca").read_bytes(), password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise CertManagerFailure(f"{pki.key('ca')} is not the EC key `up` writes")
    issue(pki, CLIENT, name_of(CLIENT, MASTERS), ca_cert, ca_key, serving=False)
    issue(pki, WEBHOOK_CERT, name_of(WEBHOOK_CERT), ca_cert, ca_key, serving=True)
    return write_kubeconfig(root / "cert-manager.kubeconfig", pki, CLIENT, server)


def start_webhook(folder: RunFolder, binary: Path, kubeconfig: Path, pki: Pki) -> int:
    """The webhook on two free ports; its secure port. It listens on every address, where any
    socket (a kubelet's probe connection from a bridge address, say) may take a port between
    its choice and the webhook's bind: then two other ports are chosen, a few times."""
    for attempt in range(1, BIND_ATTEMPTS + 1):
        port, healthz = free_port(), free_port()
        argv = [
            str(binary),
            f"--kubeconfig={kubeconfig}",
            f"--secure-port={port}",
            f"--healthz-port={healthz}",
            f"--tls-cert-file={pki.cert(WEBHOOK_CERT)}",
            f"--tls-private-key-file={pki.key(WEBHOOK_CERT)}",
        ]
        try:
            launch(folder, "cert-manager-webhook", argv, partial(probes.healthz_answers, healthz))
        except CertManagerFailure as failure:
            if attempt == BIND_ATTEMPTS or "address already in use" not in str(failure):
                raise
            continue
        return port
    raise CertManagerFailure(f"cert-manager-webhook found no free port in {BIND_ATTEMPTS} tries")


def logged(folder: RunFolder, name: str) -> Callable[[], bool]:
    """Ready once the process's log shows that its control loops run."""
    marker = CONTROLLER_STARTED if name.endswith("controller") else INJECTOR_STARTED

    def ready() -> bool:
        path = folder.log(name)
        return path.is_file() and marker in path.read_text(errors="replace")

    return ready


def launch(folder: RunFolder, name: str, argv: list[str], ready: Callable[[], bool]) -> None:
    """Start one process and poll `ready` until the deadline; fail at once if it exits."""
    record = folder.read(name)
    if record is not None and is_ours(record):
        raise CertManagerFailure(f"{name} already runs in {folder.root} (pid {record.pid})")
    process = processes.outlive(processes.start(folder, name, argv))
    deadline = time.monotonic() + READY_SECONDS
    while not ready():
        code = process.poll()
        if code is not None or time.monotonic() > deadline:
            what = f"exited with code {code}" if code is not None else "was not ready in time"
            raise CertManagerFailure(
                f"{name} {what}; the end of {folder.log(name)}:\n{log_tail(folder.log(name))}"
            )
        time.sleep(0.2)
