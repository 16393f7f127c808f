"""Kubernetes object names as the API server checks them: a namespace is a DNS-1123 label, a
Node's name (and a cluster's DNS domain) a DNS-1123 subdomain."""

from __future__ import annotations

import re

DNS_LABEL_MAX = 63
DNS_SUBDOMAIN_MAX = 253
_LABEL = "[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = rf"{_LABEL}(?:\.{_LABEL})*"
DNS_LABEL_PATTERN = f"^{_LABEL}$"  # for pydantic fields and JSON schemas, with the MAX
DNS_SUBDOMAIN_PATTERN = f"^{_SUBDOMAIN}$"


def is_dns_label(text: str) -> bool:
    """At most 63 lower-case letters, digits and '-', starting and ending with a letter or digit."""
    return len(text) <= DNS_LABEL_MAX and re.fullmatch(_LABEL, text) is not None


def is_dns_subdomain(text: str) -> bool:
    """At most 253 characters: DNS-1123 labels joined by dots."""
    return len(text) <= DNS_SUBDOMAIN_MAX and re.fullmatch(_SUBDOMAIN, text) is not None
