"""HTTP URLs of the health gate: probe templates with `{node_name}` and `{node_ip}`, and the
Prometheus address of the alert gate.

A template may name only those two placeholders; any other brace is refused, so a typo such as
`{node}` is reported when the policy is read rather than probed as literal text. Credentials in
a URL (`http://user:secret@host/`) are refused, and never repeated in the reason. What fills
`{node_ip}` comes from the Node, which its kubelet writes: anything but an IP address is a
ProbeUrlError for that node, never a URL of the kubelet's choosing.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from brupop.domain.printable import printable

URL_MAX_LENGTH = 2048
PLACEHOLDERS = ("node_name", "node_ip")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
# Stand-ins used to check that a template becomes a well-formed URL once filled in.
_SAMPLE = {"node_name": "ip-10-0-0-1.example.internal", "node_ip": "10.0.0.1"}
_USERINFO = re.compile(r"^([^:/?#]*://)[^/?#]*@")
_NODE_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,251}[A-Za-z0-9])?$")
SHOWN_MAX_LENGTH = 160  # how much of a refused URL a reason repeats


class ProbeUrlError(ValueError):
    """A URL or template that cannot be probed; the message says why."""


def masked_url(url: str) -> str:
    """`url` as a status or a log may repeat it: any credentials masked, controls out, bounded."""
    return printable(_USERINFO.sub(r"\1***@", url), SHOWN_MAX_LENGTH)


def shown_url(url: str) -> str:
    """`masked_url`, quoted, for a reason that names a URL it refuses."""
    return repr(masked_url(url))


def check_http_url(url: str) -> str:
    """`url` if it is an absolute http(s) URL with a host, no spaces, controls or credentials;
    ProbeUrlError else."""
    shown = shown_url(url)
    if len(url) > URL_MAX_LENGTH:
        raise ProbeUrlError(f"longer than {URL_MAX_LENGTH} characters")
    if any(char.isspace() for char in url) or "{" in url or "}" in url:
        raise ProbeUrlError(f"{shown}: spaces and braces do not belong in a URL")
    if printable(url) != url:
        raise ProbeUrlError(f"{shown}: control characters do not belong in a URL")
    if _USERINFO.match(url):
        raise ProbeUrlError(
            f"{shown}: credentials do not belong in a URL (they would be shown in statuses)"
        )
    try:
        parts = urlsplit(url)
        _ = parts.port  # reading it checks the port is a number in range
    except ValueError as error:
        raise ProbeUrlError(f"{shown}: {error}") from None
    if parts.scheme not in ("http", "https"):
        raise ProbeUrlError(f"{shown}: the scheme must be http or https")
    if not parts.hostname:
        raise ProbeUrlError(f"{shown}: no host")
    return url


def check_probe_template(template: str) -> str:
    """`template` if it names only known placeholders and fills in to an http(s) URL."""
    if len(template) > URL_MAX_LENGTH:
        raise ProbeUrlError(f"longer than {URL_MAX_LENGTH} characters")
    unknown = sorted({name for name in _PLACEHOLDER.findall(template) if name not in PLACEHOLDERS})
    if unknown:
        known = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
        raise ProbeUrlError(
            f"{shown_url(template)}: unknown placeholder {', '.join(f'{{{n}}}' for n in unknown)} "
            f"(only {known})"
        )
    # A template that brackets the address itself is meant for IPv6 nodes.
    sample_ip = "fd00::1" if "[{node_ip}]" in template else _SAMPLE["node_ip"]
    fill_probe_template(template, _SAMPLE["node_name"], sample_ip)  # checks what it fills in
    return template


def fill_probe_template(template: str, node_name: str, node_ip: str) -> str:
    """The URL to probe for one node. An IPv6 address gets the brackets a URL host needs,
    unless the template already puts it in brackets. ProbeUrlError when the node's name or
    address cannot be a URL's host (a Node's addresses are what its kubelet wrote)."""
    if "{node_ip}" in template:
        node_ip = _node_address(node_ip)
        if ":" in node_ip and "[{node_ip}]" not in template:
            node_ip = f"[{node_ip}]"
    if "{node_name}" in template and not _NODE_NAME.match(node_name):
        raise ProbeUrlError(f"the node name {shown_url(node_name)} cannot be put in a URL")
    url = template.replace("{node_name}", node_name).replace("{node_ip}", node_ip)
    return check_http_url(url)


def _node_address(text: str) -> str:
    """The node's InternalIP in its canonical form; ProbeUrlError when it is not an address."""
    try:
        address = ipaddress.ip_address(text) if len(text) <= 64 else None
    except ValueError:
        address = None
    if address is None:
        raise ProbeUrlError(f"the node's InternalIP {shown_url(text)} is not an IP address")
    return str(address)
