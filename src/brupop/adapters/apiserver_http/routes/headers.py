"""The Brupop headers (BrupopNodeName, BrupopNodeUid, BrupopK8sAuthToken), parsed strictly.

Anything missing, repeated, empty, over-long or outside the expected characters is a 400. The
node UID is optional only on the route that tells an agent its node's UID; when given, it is
checked everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from brupop.services.apiserver.authorization.authorizer import AccessRequest

NODE_NAME = "BrupopNodeName"
NODE_UID = "BrupopNodeUid"
TOKEN = "BrupopK8sAuthToken"

_NODE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_NODE_UID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_TOKEN = re.compile(r"[\x21-\x7e]{1,16384}")


class HeaderError(ValueError):
    """A Brupop header is missing or malformed; the message names it."""


def access_request(
    raw_headers: Iterable[tuple[bytes, bytes]], *, uid_required: bool
) -> AccessRequest:
    """The AccessRequest the headers carry."""
    wanted = {name.lower().encode(): name for name in (NODE_NAME, NODE_UID, TOKEN)}
    found: dict[str, str] = {}
    for key, value in raw_headers:
        name = wanted.get(key.lower())
        if name is None:
            continue
        if name in found:
            raise HeaderError(f"header {name} is given more than once")
        found[name] = value.decode("latin-1").strip()
    node_name = _checked(found, NODE_NAME, _NODE_NAME, 253)
    token = _checked(found, TOKEN, _TOKEN, 16384)
    node_uid = (
        _checked(found, NODE_UID, _NODE_UID, 128) if uid_required or NODE_UID in found else None
    )
    return AccessRequest(node_name=node_name, node_uid=node_uid, token=token)


def _checked(found: dict[str, str], name: str, pattern: re.Pattern[str], longest: int) -> str:
    value = found.get(name, "")
    if not value:
        raise HeaderError(f"missing header {name}")
    if len(value) > longest or pattern.fullmatch(value) is None:
        raise HeaderError(f"malformed header {name}")
    return value
