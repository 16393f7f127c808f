"""The apiserver's base URL split into what a connection needs, and a request's query string.

The agent needs only `https://host[:port][/prefix]` and a query of a few plain words; reading
them here spares every start `urllib.parse`, which loads `ipaddress` (about 5 ms of CPU under
`cpu: 10m`). Anything unusual is refused rather than guessed: user info, a fragment, spaces or
control characters, non-ASCII text, an unbracketed IPv6 address. A test holds the result equal
to `urllib.parse` on every URL this module accepts.
"""

from __future__ import annotations

from collections.abc import Mapping

from brupop.domain.value_objects import value_object

DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-._")
_IPV6_CHARACTERS = frozenset("0123456789abcdef:.")
_PATH_CHARACTERS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/%!$&'()*+,;=:@"
)
# What `urllib.parse.quote_plus` leaves as it is; a space becomes `+`, the rest `%XX`.
_QUERY_SAFE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-~")


@value_object
class BaseUrl:
    """Where the apiserver is: scheme, host (lower case, IPv6 without brackets), port, path."""

    secure: bool
    host: str
    port: int
    path_prefix: str


def _refuse(url: str) -> ValueError:
    return ValueError(f"not an http(s) URL: {url[:200]!r}")


def _host_and_port(authority: str, url: str) -> tuple[str, int | None]:
    """`host`, `host:port`, `[v6]` or `[v6]:port`, the host in lower case."""
    if authority.startswith("["):
        inside, closed, rest = authority[1:].partition("]")
        if not closed or not inside or not set(inside) <= _IPV6_CHARACTERS or ":" not in inside:
            raise _refuse(url)
        if rest and not rest.startswith(":"):
            raise _refuse(url)
        host, port = inside, rest[1:] if rest else None
    else:
        host, colon, given = authority.partition(":")
        port = given if colon else None
        if not host or not set(host) <= _HOST_CHARACTERS:
            raise _refuse(url)
    if port is None or port == "":
        return host, None
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) <= 65535:
        raise _refuse(url)
    return host, int(port)


def split_base_url(url: str) -> BaseUrl:
    """The parts of `http(s)://host[:port][/path]`; ValueError for anything else."""
    if not url.isascii() or not url.isprintable() or " " in url:
        raise _refuse(url)
    scheme, separator, rest = url.partition("://")
    scheme = scheme.lower()
    if not separator or scheme not in DEFAULT_PORTS or "?" in rest or "#" in rest:
        raise _refuse(url)
    authority, slash, path = rest.partition("/")
    if "@" in authority or not set(path) <= _PATH_CHARACTERS:
        raise _refuse(url)
    host, port = _host_and_port(authority.lower(), url)
    prefix = (slash + path).rstrip("/")
    return BaseUrl(scheme == "https", host, port or DEFAULT_PORTS[scheme], prefix)


def _quote(text: str) -> str:
    return "".join(
        chr(byte) if byte in _QUERY_SAFE else "+" if byte == 0x20 else f"%{byte:02X}"
        for byte in text.encode("utf-8")
    )


def query_string(query: Mapping[str, str]) -> str:
    """`key=value&...`, encoded as `urllib.parse.urlencode` encodes it."""
    return "&".join(f"{_quote(key)}={_quote(value)}" for key, value in query.items())
