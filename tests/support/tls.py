"""Test certificates made with `cryptography`: a CA and a loopback serving certificate it signs.

`issue` can be called again on the same paths to rotate the serving certificate.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class TestCertificates:
    """Where the CA certificate, serving certificate and key were written."""

    __test__ = False  # not a pytest test class

    ca_path: Path
    cert_path: Path
    key_path: Path
    ca_key: ec.EllipticCurvePrivateKey
    ca_cert: x509.Certificate

    def issue(self, common_name: str = "brupop-apiserver") -> x509.Certificate:
        """Write a new serving certificate and key for localhost/127.0.0.1, signed by the CA."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        names = [
            x509.DNSName("localhost"),
            x509.DNSName(common_name),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ]
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self.ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(self.ca_key, hashes.SHA256())
        )
        self.key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        self.cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return cert


def make_certificates(directory: Path) -> TestCertificates:
    """A fresh CA in `directory` (ca.crt) and a first serving certificate (tls.crt, tls.key)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "brupop test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = directory / "ca.crt"
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    certificates = TestCertificates(
        ca_path=ca_path,
        cert_path=directory / "tls.crt",
        key_path=directory / "tls.key",
        ca_key=ca_key,
        ca_cert=ca_cert,
    )
    certificates.issue()
    return certificates
