"""AddressAllowance: by default no loopback, link-local, metadata or API server address; what
PROBE_ALLOWED_NETWORKS lists is allowed; a bad allowance names its entry."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.policy.address_allowance import (
    ENTRIES_MAX,
    AddressAllowance,
    AddressAllowanceError,
)

DEFAULT = AddressAllowance()


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.255.0.9",
        "::1",
        "169.254.169.254",
        "169.254.1.1",
        "fe80::1%eth0",
        "fd00:ec2::254",
        "100.100.100.200",
        "0.0.0.0",
        "0.1.2.3",
        "::",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",
        "::ffff:0.0.0.0",
        "192.0.0.192",
        "192.0.0.1",
        "2002:a9fe:a9fe::",
        "2002:7f00:1:1234::5",
        "2001:0:4136:e378:8000:63bf:5601:5601",
        "2001::80ff:fffe",
        "not an address",
    ],
)
def test_the_default_refuses_addresses_that_reach_more_than_a_workload(address: str) -> None:
    assert DEFAULT.address_refusal("probe.example", address) is not None


@pytest.mark.parametrize(
    "address",
    ["10.0.0.9", "192.168.1.1", "fd00::7", "8.8.8.8", "100.64.0.1", "192.0.1.1", "2002:a00:9::",
     "2001:0:4136:e378:8000:63bf:f5ff:fff6", "2001:db8::1"],
)  # fmt: skip
def test_the_default_allows_workload_addresses(address: str) -> None:
    assert DEFAULT.address_refusal("probe.example", address) is None


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("192.0.0.192", "192.0.0.192 is an IETF protocol assignment address"),
        ("2002:a9fe:a9fe::", "169.254.169.254 is a cloud metadata address"),
        ("2002:7f00:1::", "127.0.0.1 is a loopback address"),
        ("2002:c000:c0::", "192.0.0.192 is an IETF protocol assignment address"),
        ("2001:0:4136:e378:8000:63bf:5601:5601", "169.254.169.254 is a cloud metadata address"),
        ("2001::80ff:fffe", "127.0.0.1 is a loopback address"),
    ],
)
def test_a_refused_ipv4_address_is_refused_in_its_6to4_and_teredo_forms(
    address: str, reason: str
) -> None:
    assert DEFAULT.address_refusal("probe.example", address) == reason


def _six_to_four(ip: ipaddress.IPv4Address) -> str:
    return str(ipaddress.IPv6Address((0x2002 << 112) | (int(ip) << 80) | 0x1))


def _teredo(ip: ipaddress.IPv4Address, server: ipaddress.IPv4Address) -> str:
    client = int(ip) ^ 0xFFFFFFFF
    return str(ipaddress.IPv6Address((0x20010000 << 96) | (int(server) << 64) | client))


@settings(max_examples=300, deadline=1000)
@given(st.ip_addresses(v=4), st.ip_addresses(v=4))
def test_every_ipv4_carrier_form_gets_the_verdict_of_its_ipv4_address(
    ip: ipaddress.IPv4Address, server: ipaddress.IPv4Address
) -> None:
    verdict = DEFAULT.address_refusal("probe.example", str(ip))
    forms = [f"::ffff:{ip}", f"64:ff9b::{ip}", _six_to_four(ip), _teredo(ip, server)]

    for form in forms:
        assert DEFAULT.address_refusal("probe.example", form) == verdict, form


@pytest.mark.parametrize(
    "host",
    [
        "metadata.google.internal",
        "Metadata.Google.Internal.",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
        "kubernetes.default.svc.corp.example",
    ],
)
def test_the_default_refuses_metadata_and_api_server_names(host: str) -> None:
    assert DEFAULT.name_refusal(host) is not None


def test_the_api_server_service_address_is_refused_by_name_and_by_address() -> None:
    policy = AddressAllowance.parse("", api_server=["10.96.0.1"])

    assert policy.name_refusal("10.96.0.1") is not None
    assert policy.address_refusal("api.example", "10.96.0.1") == (
        "10.96.0.1 is the cluster's API server (KUBERNETES_SERVICE_HOST)"
    )
    assert policy.address_refusal("api.example", "10.96.0.2") is None


def test_listed_networks_and_hosts_are_allowed() -> None:
    policy = AddressAllowance.parse("127.0.0.1, 169.254.20.0/24 fd00:ec2::/32,local-prom.internal")

    assert policy.address_refusal("x", "127.0.0.1") is None
    assert policy.address_refusal("x", "127.0.0.2") is not None
    assert policy.address_refusal("x", "169.254.20.7") is None
    assert policy.address_refusal("x", "fd00:ec2::254") is None
    assert policy.address_refusal("x", "::ffff:127.0.0.1") is None
    assert policy.name_refusal("LOCAL-PROM.internal.") is None
    assert policy.address_refusal("local-prom.internal", "169.254.169.254") is None


@pytest.mark.parametrize(
    "text",
    ["10.0.0.0/33", "fd00::/129", "http://10.0.0.1/", "bad_host!", "-a.example", "0x7f000001",
     "999.1.1.1", "a" * 254, ",".join(["10.0.0.1"] * (ENTRIES_MAX + 1)), "x" * 5000],
)  # fmt: skip
def test_a_bad_allowance_is_refused_with_its_entry(text: str) -> None:
    with pytest.raises(AddressAllowanceError):
        AddressAllowance.parse(text)


def test_a_bad_entry_of_control_characters_is_named_in_a_short_message() -> None:
    entry = "0/" + "\x1b" * 40 + "\U00012544" * 40
    with pytest.raises(AddressAllowanceError) as refused:
        AddressAllowance.parse(entry)
    assert len(str(refused.value)) < 200
    assert str(refused.value).startswith("'0/\\x1b")


@settings(max_examples=300, deadline=1000)
@given(st.text(max_size=300))
def test_any_allowance_text_parses_or_is_refused(text: str) -> None:
    try:
        AddressAllowance.parse(text)
    except AddressAllowanceError as error:
        assert len(str(error)) < 200


@settings(max_examples=300, deadline=1000)
@given(st.text(max_size=100), st.text(max_size=100))
def test_any_host_and_address_get_a_verdict(host: str, address: str) -> None:
    DEFAULT.name_refusal(host)
    DEFAULT.address_refusal(host, address)
