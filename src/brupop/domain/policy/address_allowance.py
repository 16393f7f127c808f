"""Where the health gate's probes and the alert gate's Prometheus may connect (the SSRF rules).

A policy's author, or a kubelet that writes its own Node's addresses, chooses the URLs the
controller GETs, and what answers leaks back into the status. So by default the controller
refuses the addresses that reach more than a workload: loopback (the controller's own pod),
link-local (169.254.0.0/16, fe80::/10, where clouds serve instance credentials), the known
metadata addresses and names, the unspecified address, the IETF protocol assignments
(192.0.0.0/24), and the cluster's API server (by name and by its Service address); an IPv6
address that carries an IPv4 one (mapped, NAT64, 6to4, Teredo) is judged as that one too.
The check is made on the address each connection goes to, after name resolution, so a name
that resolves elsewhere on its next lookup (DNS rebinding) gains nothing. An administrator
lifts it for the networks and hosts `PROBE_ALLOWED_NETWORKS` lists.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

ALLOWANCE_SETTING = "PROBE_ALLOWED_NETWORKS"
ENTRIES_MAX = 64
SETTING_MAX_LENGTH = 4096
HOST_MAX_LENGTH = 253
ENTRY_QUOTE_MAX = 100  # a bad entry quoted in a message; control characters escape long

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Instance metadata services: AWS (IPv4 and IPv6), GCP, Azure, OCI, DigitalOcean (all at
# 169.254.169.254), Alibaba Cloud, and the ECS task metadata endpoint.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(text)
    for text in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200", "169.254.170.2")
)
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata.goog", "metadata"})
# The API server's in-cluster names; any name under kubernetes.default.svc counts too (the
# cluster domain is not always cluster.local).
API_SERVER_NAMES = frozenset({"kubernetes", "kubernetes.default", "kubernetes.default.svc"})
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
# IETF protocol assignments (RFC 6890): NAT64 discovery, DS-Lite, PCP anycast and the like.
_PROTOCOL_ASSIGNMENTS = ipaddress.ip_network("192.0.0.0/24")
_LOW_32 = 0xFFFFFFFF
# IPv6 forms that carry an IPv4 address, each with where the address sits in its 128 bits:
# mapped (::ffff:a.b.c.d), compatible (::a.b.c.d) and the NAT64 well-known prefix
# (64:ff9b::a.b.c.d) in the low 32 bits; 6to4 (2002:aabb:ccdd::) in bits 80 to 111; Teredo
# (2001::/32) the client's address, inverted, in the low 32 bits.
_CARRIERS: tuple[tuple[ipaddress.IPv6Network, Callable[[int], int]], ...] = (
    (ipaddress.IPv6Network("::ffff:0:0/96"), lambda bits: bits & _LOW_32),
    (ipaddress.IPv6Network("::/96"), lambda bits: bits & _LOW_32),
    (ipaddress.IPv6Network("64:ff9b::/96"), lambda bits: bits & _LOW_32),
    (ipaddress.IPv6Network("2002::/16"), lambda bits: (bits >> 80) & _LOW_32),
    (ipaddress.IPv6Network("2001::/32"), lambda bits: (bits & _LOW_32) ^ _LOW_32),
)
_LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?"
_HOST_NAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")
_NUMERIC = re.compile(r"^(0x[0-9a-f]*|[0-9]+)([.](0x[0-9a-f]*|[0-9]+))*$")


class AddressAllowanceError(ValueError):
    """The allowance cannot be read; the message names the entry at fault."""


def host_key(host: str) -> str:
    """A host as the allowance compares it: lower case, no brackets, no trailing dot."""
    return host.strip("[]").rstrip(".").lower()


@dataclass(frozen=True)
class AddressAllowance:
    """The default refusals, the allowed networks and hosts, and the API server's addresses."""

    networks: tuple[Network, ...] = ()
    hosts: frozenset[str] = frozenset()
    api_server: frozenset[str] = frozenset()  # its Service host (KUBERNETES_SERVICE_HOST)

    @classmethod
    def parse(cls, text: str, api_server: Iterable[str] = ()) -> AddressAllowance:
        """An allowance for what `text` lists: comma- or space-separated CIDRs, addresses
        and host names (at most ENTRIES_MAX); AddressAllowanceError names a bad entry."""
        if len(text) > SETTING_MAX_LENGTH:
            raise AddressAllowanceError(f"longer than {SETTING_MAX_LENGTH} characters")
        entries = [entry for entry in re.split(r"[,\s]+", text) if entry]
        if len(entries) > ENTRIES_MAX:
            raise AddressAllowanceError(f"more than {ENTRIES_MAX} entries ({len(entries)})")
        networks: list[Network] = []
        hosts: set[str] = set()
        for entry in entries:
            network = _network(entry)
            if network is not None:
                networks.append(network)
            else:
                hosts.add(_host(entry))
        servers = frozenset(_server_key(host) for host in api_server if host)
        return cls(tuple(networks), frozenset(hosts), servers)

    def name_refusal(self, host: str) -> str | None:
        """Why `host` is refused by its name alone (before any lookup); None if it is not."""
        key = host_key(host)
        if key in self.hosts:
            return None
        if key in METADATA_NAMES:
            return f"{key} is a cloud metadata service"
        if key in API_SERVER_NAMES or key.startswith("kubernetes.default.svc."):
            return f"{key} is the cluster's API server"
        if key in self.api_server:
            return f"{key} is the cluster's API server (KUBERNETES_SERVICE_HOST)"
        return None

    def address_refusal(self, host: str, address: str) -> str | None:
        """Why connecting to `address` (what `host` resolved to) is refused; None if it is
        not. An address that cannot be read is refused."""
        if host_key(host) in self.hosts:
            return None
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return f"{address!r} is not an IP address"
        forms = _forms(ip)
        if any(form in network for form in forms for network in self.networks):
            return None
        for form in forms:
            if str(form) in self.api_server:
                return f"{form} is the cluster's API server (KUBERNETES_SERVICE_HOST)"
            kind = _kind(form)
            if kind is not None:
                return f"{form} is {kind}"
        return None


def _forms(ip: Address) -> tuple[Address, ...]:
    """The address, and the IPv4 address an IPv6 one carries (judged like that IPv4 one)."""
    if isinstance(ip, ipaddress.IPv6Address):
        for carrier, carried_bits in _CARRIERS:
            if ip in carrier:
                return ip, ipaddress.IPv4Address(carried_bits(int(ip)))
    return (ip,)


def _kind(ip: Address) -> str | None:
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address"
    if ip.is_unspecified or (isinstance(ip, ipaddress.IPv4Address) and ip in _THIS_NETWORK):
        return "an unspecified address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _PROTOCOL_ASSIGNMENTS:
        return "an IETF protocol assignment address"
    return None


def _network(entry: str) -> Network | None:
    """`entry` as a network (an address alone is a network of one); None for a host name."""
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        if "/" in entry or ":" in entry:
            raise AddressAllowanceError(_not_an_entry(entry)) from None
        return None


def _host(entry: str) -> str:
    key = host_key(entry)
    if len(key) > HOST_MAX_LENGTH or not _HOST_NAME.match(key) or _NUMERIC.match(key):
        raise AddressAllowanceError(_not_an_entry(entry))
    return key


def _not_an_entry(entry: str) -> str:
    """The message naming a bad entry, quoted and cut to 100 characters (escapes included)."""
    quoted = repr(entry[:80])
    if len(quoted) > ENTRY_QUOTE_MAX:
        quoted = quoted[: ENTRY_QUOTE_MAX - 3] + "..."
    return f"{quoted} is not a CIDR, an address or a host name"


def _server_key(host: str) -> str:
    """The API server's host as compared: an address in its canonical form, else a host key."""
    key = host_key(host)
    try:
        return str(ipaddress.ip_address(key))
    except ValueError:
        return key
