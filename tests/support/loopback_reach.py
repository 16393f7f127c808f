"""Tests talk to loopback only, which the address allowance refuses by default: they allow it the
way an administrator would, through PROBE_ALLOWED_NETWORKS's parser."""

from __future__ import annotations

from brupop.adapters.http.bounded_get import BoundedGet
from brupop.adapters.http.host_lookup import HostLookups, Resolver
from brupop.domain.policy.address_allowance import AddressAllowance

LOOPBACK_ALLOWANCE = "127.0.0.1"  # the PROBE_ALLOWED_NETWORKS of every loopback test


def loopback_http(resolver: Resolver | None = None) -> BoundedGet:
    """A bounded GET that may reach 127.0.0.1 (and only what the default allows besides)."""
    lookups = HostLookups(resolver) if resolver is not None else None
    return BoundedGet(AddressAllowance.parse(LOOPBACK_ALLOWANCE), lookups)
