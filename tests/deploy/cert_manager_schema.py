"""The part of cert-manager's v1 API that brupop's manifests use, as JSON Schema.

kubernetes-validate has no schema for cert-manager kinds. These schemas hold the required
fields, the enums and the field names of Certificate and Issuer specs (cert-manager v1), so a
typo or a missing field fails here rather than in a cluster. Fields brupop does not use are not
listed, and so are refused: add them here when the manifests start using them.
"""

from __future__ import annotations

from typing import Any

_NAME = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", "maxLength": 253}
_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
_KEY_USAGES = [
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc",
]  # fmt: skip
_METADATA = {
    "type": "object",
    "required": ["name", "namespace"],
    "properties": {"name": _NAME, "namespace": _NAME},
}


def _resource(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": "cert-manager.io/v1"},
            "kind": {"const": kind},
            "metadata": _METADATA,
            "spec": spec,
        },
    }


_CERTIFICATE_SPEC = {
    "type": "object",
    "required": ["secretName", "issuerRef"],
    "additionalProperties": False,
    # A certificate names at least one subject.
    "anyOf": [{"required": [field]} for field in ("commonName", "dnsNames", "ipAddresses")],
    "properties": {
        "secretName": _NAME,
        "commonName": {"type": "string", "minLength": 1, "maxLength": 64},
        "dnsNames": _STRINGS,
        "ipAddresses": _STRINGS,
        "isCA": {"type": "boolean"},
        "duration": {"type": "string"},
        "renewBefore": {"type": "string"},
        "usages": {"type": "array", "items": {"enum": _KEY_USAGES}, "uniqueItems": True},
        "privateKey": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "algorithm": {"enum": ["RSA", "ECDSA", "Ed25519"]},
                "encoding": {"enum": ["PKCS1", "PKCS8"]},
                "size": {"type": "integer"},
                "rotationPolicy": {"enum": ["Never", "Always"]},
            },
        },
        "issuerRef": {
            "type": "object",
            "required": ["name"],
            "additionalProperties": False,
            "properties": {
                "name": _NAME,
                "kind": {"enum": ["Issuer", "ClusterIssuer"]},
                "group": {"const": "cert-manager.io"},
            },
        },
    },
}

_ISSUER_SPEC = {
    "type": "object",
    "additionalProperties": False,
    # An Issuer is of exactly one type; brupop uses the self-signed and the CA ones.
    "minProperties": 1,
    "maxProperties": 1,
    "properties": {
        "selfSigned": {"type": "object", "additionalProperties": False, "properties": {}},
        "ca": {
            "type": "object",
            "required": ["secretName"],
            "additionalProperties": False,
            "properties": {"secretName": _NAME},
        },
    },
}

CERT_MANAGER_SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    ("cert-manager.io/v1", "Certificate"): _resource("Certificate", _CERTIFICATE_SPEC),
    ("cert-manager.io/v1", "Issuer"): _resource("Issuer", _ISSUER_SPEC),
}
