"""Health-gate URLs: probe templates name only {node_name} and {node_ip}; URLs are http(s)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.policy.probe_url import (
    ProbeUrlError,
    check_http_url,
    check_probe_template,
    fill_probe_template,
)


@pytest.mark.parametrize(
    "template",
    [
        "http://{node_ip}:10256/healthz",
        "https://checks.example.com/node/{node_name}?ip={node_ip}",
        "http://[{node_ip}]:8080/",
        "http://{node_name}.nodes.internal/ready",
        "https://static.example.com/health",
    ],
)
def test_good_templates_are_accepted(template: str) -> None:
    assert check_probe_template(template) == template


@pytest.mark.parametrize(
    "template",
    [
        "http://{node}/healthz",
        "http://{NODE_IP}/healthz",
        "http://{node_ip/healthz",
        "http://{}/healthz",
        "http://{node_ip}}/healthz",
        "ftp://{node_ip}/healthz",
        "{node_ip}:8080/healthz",
        "http:///healthz",
        "http://{node_ip}:99999/",
        "http://{node_ip}:port/",
        "http://{node_ip}/heal thz",
        "http://{node_ip}/" + "x" * 2048,
    ],
)
def test_bad_templates_are_refused_with_a_reason(template: str) -> None:
    with pytest.raises(ProbeUrlError):
        check_probe_template(template)


def test_filling_a_template_names_the_node_and_brackets_an_ipv6_address() -> None:
    template = "http://{node_ip}:10256/healthz?node={node_name}"
    assert fill_probe_template(template, "node-a", "10.0.0.7") == (
        "http://10.0.0.7:10256/healthz?node=node-a"
    )
    assert fill_probe_template(template, "node-a", "fd00::7") == (
        "http://[fd00::7]:10256/healthz?node=node-a"
    )
    assert fill_probe_template("http://[{node_ip}]/", "n", "fd00::7") == "http://[fd00::7]/"


@pytest.mark.parametrize(
    "url",
    ["prometheus:9090", "http://", "http://{node_ip}:9090", "tcp://prom:9090", "http://p :9090"],
)
def test_the_prometheus_url_is_a_plain_http_url(url: str) -> None:
    with pytest.raises(ProbeUrlError):
        check_http_url(url)
    assert check_http_url("http://prometheus.monitoring.svc:9090") == (
        "http://prometheus.monitoring.svc:9090"
    )


def test_an_unknown_placeholder_is_named_along_with_the_known_ones() -> None:
    with pytest.raises(ProbeUrlError) as refused:
        check_probe_template("http://{node}:{port}/healthz")
    assert "unknown placeholder {node}, {port} (only {node_name}, {node_ip})" in str(refused.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://admin:s3cret@prometheus.monitoring:9090",
        "https://token@checks.example.com/",
        "http://admin:s3cret@[::1/",
    ],
)
def test_credentials_in_a_url_are_refused_and_never_repeated(url: str) -> None:
    with pytest.raises(ProbeUrlError) as refused:
        check_http_url(url)

    assert "s3cret" not in str(refused.value) and "token@" not in str(refused.value)


def test_control_characters_in_a_url_are_refused() -> None:
    with pytest.raises(ProbeUrlError, match="control characters"):
        check_http_url("http://prom:9090/\x1b]0;t\x07")


@pytest.mark.parametrize(
    "address", ["10.0.0.9:8080", "evil.example#", "10.0.0.9/x", "", "a@b", "[fd00::1]", "1" * 200]
)
def test_a_node_address_that_is_no_ip_address_is_a_probe_url_error(address: str) -> None:
    with pytest.raises(ProbeUrlError, match="is not an IP address"):
        fill_probe_template("http://{node_ip}:10256/healthz", "node-a", address)


@settings(max_examples=400, deadline=1000)
@given(st.text(max_size=80), st.text(max_size=80))
def test_any_node_name_and_address_give_a_url_or_a_probe_url_error(name: str, address: str) -> None:
    try:
        url = fill_probe_template("http://{node_ip}:10256/healthz/{node_name}", name, address)
    except ProbeUrlError:
        return
    assert check_http_url(url) == url
    assert url.startswith("http://") and url.endswith(f":10256/healthz/{name}")
