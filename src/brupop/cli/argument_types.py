"""Checked command-line values shared by brupop's subcommands (argparse `type=` functions).

Each raises argparse.ArgumentTypeError with the reason, so argparse prints the flag's name and
why its value is refused, and exits 2 (a plain ValueError would print "invalid _port value").
"""

from __future__ import annotations

import argparse
import math
import re
import urllib.parse
from collections.abc import Callable

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_LABEL_MAX = 63
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_SUBDOMAIN_MAX = 253


def dns_label(text: str) -> str:
    """A Kubernetes namespace name: a DNS-1123 label."""
    if len(text) > _DNS_LABEL_MAX or not _DNS_LABEL.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a namespace name: at most {_DNS_LABEL_MAX} lower-case letters,"
            " digits and '-', starting and ending with a letter or digit (DNS-1123 label)"
        )
    return text


def node_name(text: str) -> str:
    """A Kubernetes Node name: a DNS-1123 subdomain."""
    if len(text) > _DNS_SUBDOMAIN_MAX or not _DNS_SUBDOMAIN.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a node name: at most {_DNS_SUBDOMAIN_MAX} lower-case letters,"
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
