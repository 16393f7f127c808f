"""HTTP URLs of the health gate: probe templates with `{node_name}` and `{node_ip}`, and the
Prometheus address of the alert gate.

A template may name only those two placeholders; any other brace is refused, so a typo such as
`{node}` is reported when the policy is read rather than probed as literal text.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

URL_MAX_LENGTH = 2048
PLACEHOLDERS = ("node_name", "node_ip")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
# Stand-ins used to check that a template becomes a well-formed URL once filled in.
_SAMPLE = {"node_name": "ip-10-0-0-1.example.internal", "node_ip": "10.0.0.1"}


class ProbeUrlError(ValueError):
    """A URL or template that cannot be probed; the message says why."""


def check_http_url(url: str) -> str:
    """`url` if it is an absolute http(s) URL with a host and no spaces; ProbeUrlError else."""
    if len(url) > URL_MAX_LENGTH:
        raise ProbeUrlError(f"longer than {URL_MAX_LENGTH} characters")
    if any(char.isspace() for char in url) or "{" in url or "}" in url:
        raise ProbeUrlError(f"{url!r}: spaces and braces do not belong in a URL")
    try:
        parts = urlsplit(url)
        _ = parts.port  # reading it checks the port is a number in range
    except ValueError as error:
        raise ProbeUrlError(f"{url!r}: {error}") from None
    if parts.scheme not in ("http", "https"):
        raise ProbeUrlError(f"{url!r}: the scheme must be http or https")
    if not parts.hostname:
        raise ProbeUrlError(f"{url!r}: no host")
    return url


def check_probe_template(template: str) -> str:
    """`template` if it names only known placeholders and fills in to an http(s) URL."""
    if len(template) > URL_MAX_LENGTH:
        raise ProbeUrlError(f"longer than {URL_MAX_LENGTH} characters")
    unknown = sorted({name for name in _PLACEHOLDER.findall(template) if name not in PLACEHOLDERS})
    if unknown:
        known = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
        raise ProbeUrlError(
            f"{template!r}: unknown placeholder {', '.join(f'{{{n}}}' for n in unknown)} "
            f"(only {known})"
        )
    # A template that brackets the address itself is meant for IPv6 nodes.
    sample_ip = "fd00::1" if "[{node_ip}]" in template else _SAMPLE["node_ip"]
    check_http_url(fill_probe_template(template, _SAMPLE["node_name"], sample_ip))
    return template


def fill_probe_template(template: str, node_name: str, node_ip: str) -> str:
    """The URL to probe for one node. An IPv6 address gets the brackets a URL host needs,
    unless the template already puts it in brackets."""
    if ":" in node_ip and "[{node_ip}]" not in template:
        node_ip = f"[{node_ip}]"
    return template.replace("{node_name}", node_name).replace("{node_ip}", node_ip)
