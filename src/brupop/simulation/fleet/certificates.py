"""A throwaway certificate authority and a loopback serving certificate for the apiserver.

In a cluster cert-manager makes these; a simulation makes its own so agents verify the
apiserver exactly as they would there (CA file, hostname check) without any setup.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOOPBACK_HOST = "127.0.0.1"
_VALIDITY = datetime.timedelta(days=1)


@dataclass(frozen=True)
class TlsFiles:
    """Where the CA certificate, the serving certificate and its key were written."""

    ca_cert: Path
    cert: Path
    key: Path


def write_loopback_tls(directory: Path) -> TlsFiles:
    """Make a CA and a certificate for 127.0.0.1/localhost signed by it; write them as PEM."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = _authority(ca_key, now)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = _serving(server_key.public_key(), ca_cert.subject, ca_key, now)
    files = TlsFiles(
        ca_cert=directory / "ca.crt", cert=directory / "tls.crt", key=directory / "tls.key"
    )
    files.ca_cert.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    files.cert.write_bytes(server_cert.public_bytes(serialization.Encoding.PEM))
    files.key.touch(mode=0o600)
    files.key.write_bytes(
        server_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


def _authority(key: ec.EllipticCurvePrivateKey, now: datetime.datetime) -> x509.Certificate:
    """A self-signed CA that may sign serving certificates only."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "brupop-simulate-ca")])
    usage = x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=True,
        crl_sign=True,
        encipher_only=False,
        decipher_only=False,
    )
    return (
        _builder(name, name, key.public_key(), now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
        .sign(key, hashes.SHA256())
    )


def _serving(
    public_key: ec.EllipticCurvePublicKey,
    issuer: x509.Name,
    ca_key: ec.EllipticCurvePrivateKey,
    now: datetime.datetime,
) -> x509.Certificate:
    """The apiserver's certificate: valid for 127.0.0.1 and localhost, signed by the CA."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "brupop-apiserver")])
    names = x509.SubjectAlternativeName(
        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address(LOOPBACK_HOST))]
    )
    return (
        _builder(name, issuer, public_key, now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(names, critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )


def _builder(
    subject: x509.Name, issuer: x509.Name, key: ec.EllipticCurvePublicKey, now: datetime.datetime
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + _VALIDITY)
    )
