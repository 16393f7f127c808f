"""Readiness probes: plain HTTP for etcd and kwok, mutual TLS as the admin for
kube-apiserver."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

from tests.support.control_plane.components import Ports
from tests.support.control_plane.pki import Pki

TIMEOUT_SECONDS = 2.0


def admin_tls(pki: Pki) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki.ca))
    context.load_cert_chain(str(pki.cert("admin")), str(pki.key("admin")))
    return context


def fetch(url: str, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    """(status, body) of a GET; (0, b"") when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS, context=context) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (OSError, ValueError):
        return 0, b""


def etcd_healthy(ports: Ports) -> bool:
    status, body = fetch(f"http://127.0.0.1:{ports.etcd_client}/health")
    try:
        return status == 200 and json.loads(body).get("health") == "true"
    except ValueError:
        return False


SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease")


def apiserver_ready(pki: Pki, ports: Ports) -> bool:
    """`/readyz` is ok and the system namespaces exist. `/readyz` can pass before the
    apiserver's namespace controller has made them, and that controller tries again only a
    minute later; without kube-node-lease kwok holds no Node lease, so manages no Node."""
    context = admin_tls(pki)
    status, body = fetch(f"{ports.server}/readyz", context)
    if status != 200 or body.strip() != b"ok":
        return False
    base = f"{ports.server}/api/v1/namespaces"
    return all(fetch(f"{base}/{name}", context)[0] == 200 for name in SYSTEM_NAMESPACES)


def controller_manager_ready(pki: Pki, ports: Ports) -> bool:
    """Its serviceaccount and root-ca publisher controllers have done their first work."""
    base = f"{ports.server}/api/v1/namespaces/default"
    context = admin_tls(pki)
    account, _ = fetch(f"{base}/serviceaccounts/default", context)
    root_ca, _ = fetch(f"{base}/configmaps/kube-root-ca.crt", context)
    return account == 200 and root_ca == 200


def healthz_answers(port: int) -> bool:
    """A plain-HTTP `/healthz` on loopback `port` answers 200."""
    status, _ = fetch(f"http://127.0.0.1:{port}/healthz")
    return status == 200


def kwok_ready(ports: Ports) -> bool:
    status, body = fetch(f"http://127.0.0.1:{ports.kwok}/healthz")
    return status == 200 and body.strip() == b"ok"
