"""The control plane's certificates and kubeconfigs, made with `cryptography`.

A CA; kube-apiserver's serving certificate (IP:127.0.0.1, DNS:localhost); client
certificates in `system:masters` for the admin, kube-controller-manager and kwok; and the
service-account signing key. Everything lives in DIR/pki; the kubeconfigs embed their
certificates so they can be copied anywhere.
"""

from __future__ import annotations

import base64
import ipaddress
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = timedelta(days=30)
MASTERS = "system:masters"
CLIENTS = {"admin": "brupop-admin", "kcm": "system:kube-controller-manager", "kwok": "kwok"}


@dataclass(frozen=True)
class Pki:
    """The file names under DIR/pki."""

    folder: Path

    @property
    def ca(self) -> Path:
        return self.folder / "ca.crt"

    @property
    def service_account_key(self) -> Path:
        return self.folder / "service-account.key"

    def cert(self, name: str) -> Path:
        return self.folder / f"{name}.crt"

    def key(self, name: str) -> Path:
        return self.folder / f"{name}.key"


def make_pki(folder: Path) -> Pki:
    """Write a fresh CA, the serving and client certificates, and the signing key."""
    folder.mkdir(parents=True, exist_ok=True)
    pki = Pki(folder)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name_of("brupop control-plane CA")
    ca_cert = signed(builder(ca_name, ca_name, ca_key), ca_key, ca=True)
    write_key(pki.key("ca"), ca_key)
    pki.ca.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    issue(pki, "apiserver", name_of("kube-apiserver"), ca_cert, ca_key, serving=True)
    for client, common_name in CLIENTS.items():
        issue(pki, client, name_of(common_name, MASTERS), ca_cert, ca_key, serving=False)
    write_key(pki.service_account_key, rsa.generate_private_key(65537, 2048))
    return pki


def rotate_service_account_key(pki: Pki) -> None:
    """A new service-account signing key in place of the old one: kube-apiserver, restarted,
    signs with it and publishes it alone, so tokens signed by the old key stop verifying."""
    write_key(pki.service_account_key, rsa.generate_private_key(65537, 2048))


def name_of(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePrivateKey
) -> x509.CertificateBuilder:
    now = datetime.now(UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
    )


def signed(
    draft: x509.CertificateBuilder, signer: ec.EllipticCurvePrivateKey, ca: bool
) -> x509.Certificate:
    constraints = x509.BasicConstraints(ca=ca, path_length=0 if ca else None)
    draft = draft.add_extension(constraints, critical=True)
    if ca:
        draft = draft.add_extension(ca_usage(), critical=True)
    return draft.sign(signer, hashes.SHA256())


def ca_usage() -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=True,
        crl_sign=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )


def issue(
    pki: Pki,
    name: str,
    subject: x509.Name,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    serving: bool,
) -> None:
    """Write DIR/pki/<name>.crt and .key, for serving on loopback or for a client."""
    key = ec.generate_private_key(ec.SECP256R1())
    draft = builder(subject, ca_cert.subject, key)
    if serving:
        draft = draft.add_extension(loopback_names(), critical=False)
        usage = ExtendedKeyUsageOID.SERVER_AUTH
    else:
        usage = ExtendedKeyUsageOID.CLIENT_AUTH
    draft = draft.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    cert = signed(draft, ca_key, ca=False)
    write_key(pki.key(name), key)
    pki.cert(name).write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def loopback_names() -> x509.SubjectAlternativeName:
    """Loopback, and the names pods of real nodes use: the `kubernetes` Service's address and
    DNS names, and the first node bridge's address it forwards to."""
    return x509.SubjectAlternativeName(
        [
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("10.96.0.1")),
            x509.IPAddress(ipaddress.ip_address("10.245.0.1")),
            x509.DNSName("localhost"),
            x509.DNSName("kubernetes"),
            x509.DNSName("kubernetes.default"),
            x509.DNSName("kubernetes.default.svc"),
            x509.DNSName("kubernetes.default.svc.cluster.local"),
        ]
    )


def write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.write_bytes(pem)
    path.chmod(0o600)


def write_kubeconfig(path: Path, pki: Pki, client: str, server: str) -> Path:
    """A one-context kubeconfig for `client` (admin, kcm or kwok), certificates embedded."""

    def data(file: Path) -> str:
        return base64.b64encode(file.read_bytes()).decode()

    cluster = {"server": server, "certificate-authority-data": data(pki.ca)}
    user = {
        "client-certificate-data": data(pki.cert(client)),
        "client-key-data": data(pki.key(client)),
    }
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "brupop-control-plane", "cluster": cluster}],
        "users": [{"name": client, "user": user}],
        "contexts": [
            {"name": client, "context": {"cluster": "brupop-control-plane", "user": client}}
        ],
        "current-context": client,
    }
    path.write_text(json.dumps(config, indent=2) + "\n")
    path.chmod(0o600)
    return path
