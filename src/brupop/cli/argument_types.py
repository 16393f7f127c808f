"""Checked command-line values shared by brupop's subcommands (argparse `type=` functions).

Each raises argparse.ArgumentTypeError with the reason, so argparse prints the flag's name and
why its value is refused, and exits 2 (a plain ValueError would print "invalid _port value").
"""

from __future__ import annotations

import argparse
import math
import urllib.parse
from collections.abc import Callable

from brupop.domain.object_names import (
    DNS_LABEL_MAX,
    DNS_SUBDOMAIN_MAX,
    is_dns_label,
    is_dns_subdomain,
)


def dns_label(text: str) -> str:
    """A Kubernetes namespace name: a DNS-1123 label."""
    if not is_dns_label(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a namespace name: at most {DNS_LABEL_MAX} lower-case letters,"
            " digits and '-', starting and ending with a letter or digit (DNS-1123 label)"
        )
    return text


def node_name(text: str) -> str:
    """A Kubernetes Node name: a DNS-1123 subdomain."""
    if not is_dns_subdomain(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a node name: at most {DNS_SUBDOMAIN_MAX} lower-case letters,"
            " digits, '-' and '.', each dot-separated part starting and ending with a letter or"
            " digit (DNS-1123 subdomain)"
        )
    return text


def tcp_port(text: str) -> int:
    """A TCP port, 1 to 65535."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (a whole number 1-65535)")
    return int(text)


def seconds_up_to(most: float) -> Callable[[str], float]:
    """A type function for a duration: a finite number of seconds above 0, at most `most`."""

    def seconds(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not 0 < value <= most:  # NaN fails this too
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a number of seconds above 0 and at most {most:g}"
            )
        return value

    return seconds


def http_url(text: str) -> str:
    """An http:// or https:// address with a host, like http://127.0.0.1:8080."""
    try:
        parts = urllib.parse.urlsplit(text)
        port_ok = parts.port is None or parts.port > 0  # .port raises on a bad port
    except ValueError:
        port_ok = False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an http:// or https:// address with a host, like "
            "http://127.0.0.1:8080"
        )
    return text
