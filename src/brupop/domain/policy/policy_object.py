"""A BottlerocketUpdatePolicy object as read from the cluster or a file, and which one counts.

Reading never raises for a bad spec: the object is kept with `spec=None` and the reason in
`problem`, so the controller can say what is wrong in the status while it keeps its last good
policy. Only the object named `default` in brupop's namespace counts; the others are listed so
the controller can warn about them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from brupop.domain.policy.update_policy import (
    API_VERSION,
    DEFAULT_POLICY_NAME,
    KIND,
    PAUSE_CREATED_ANNOTATION,
    PAUSE_CREATED_VALUE,
    UpdatePolicySpec,
)
from brupop.domain.policy.update_policy_status import UpdatePolicyStatus
from brupop.domain.policy.wire_format import NESTING_MAX, nests_deeper_than

PROBLEM_MAX_LENGTH = 1024
_PROBLEMS_SHOWN = 5
_KEY_SHOWN_CHARS = 64


class PolicyObjectError(ValueError):
    """Not a BottlerocketUpdatePolicy at all (no name, another kind): nothing to keep."""


@dataclass(frozen=True)
class UpdatePolicy:
    """One policy object: its identity, its spec (None when unreadable, with the reason) and
    the status the controller last wrote."""

    name: str
    namespace: str
    spec: UpdatePolicySpec | None
    problem: str | None = None
    status: UpdatePolicyStatus | None = None
    generation: int | None = None
    resource_version: str | None = None
    uid: str | None = None
    pause_created: bool = False  # `brupop pause` created it (its annotation says so)

    @property
    def is_default(self) -> bool:
        """This is the object brupop follows (the name `default`)."""
        return self.name == DEFAULT_POLICY_NAME


@dataclass(frozen=True)
class PolicySnapshot:
    """The policy objects of brupop's namespace at one resourceVersion."""

    default: UpdatePolicy | None
    ignored: tuple[str, ...] = ()
    resource_version: str | None = None


def policy_snapshot(
    policies: Iterable[UpdatePolicy], resource_version: str | None
) -> PolicySnapshot:
    """Split a listing into the `default` object and the names of those brupop ignores."""
    found = list(policies)
    default = next((policy for policy in found if policy.is_default), None)
    ignored = tuple(sorted(policy.name for policy in found if not policy.is_default))
    return PolicySnapshot(default=default, ignored=ignored, resource_version=resource_version)


def policy_from_object(obj: object) -> UpdatePolicy:
    """The policy in a wire object (camelCase JSON, as `kubectl apply` sends it); whatever
    else the JSON holds is a PolicyObjectError."""
    if not isinstance(obj, Mapping):
        raise PolicyObjectError(f"expected a {KIND} object, not a JSON {_json_type(obj)}")
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind not in (None, KIND) or api_version not in (None, API_VERSION):
        raise PolicyObjectError(
            f"expected apiVersion {API_VERSION} and kind {KIND}, not apiVersion "
            f"{_shown(api_version)} and kind {_shown(kind)}"
        )
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise PolicyObjectError(f"a {KIND} needs metadata.name")
    spec, problem = read_spec(obj.get("spec"))
    return UpdatePolicy(
        name=name,
        namespace=_text(meta.get("namespace")) or "",
        spec=spec,
        problem=problem,
        status=_read_status(obj.get("status")),
        generation=_integer(meta.get("generation")),
        resource_version=_text(meta.get("resourceVersion")),
        uid=_text(meta.get("uid")),
        pause_created=_pause_created(meta.get("annotations")),
    )


def read_spec(raw: object) -> tuple[UpdatePolicySpec | None, str | None]:
    """The spec, or None and one readable sentence on what is wrong with it."""
    if nests_deeper_than(raw):
        return None, f"spec: nested more than {NESTING_MAX} levels deep"
    try:
        return UpdatePolicySpec.model_validate(raw if raw is not None else {}), None
    except ValidationError as error:
        return None, describe_errors(error)


def describe_errors(error: ValidationError) -> str:
    """`spec.path: reason; ...` for the first few problems, bounded in length."""
    parts = []
    for item in error.errors()[:_PROBLEMS_SHOWN]:
        where = ".".join(_location(part) for part in ("spec", *item["loc"]))
        reason = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {reason}")
    more = len(error.errors()) - _PROBLEMS_SHOWN
    text = "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
    return text[:PROBLEM_MAX_LENGTH]


def policy_object(policy: UpdatePolicy) -> dict[str, Any]:
    """The wire object of a readable policy (what `kubectl apply` would send), status left out."""
    if policy.spec is None:
        raise PolicyObjectError(f"policy {policy.name!r} has no readable spec: {policy.problem}")
    metadata: dict[str, Any] = {"name": policy.name, "namespace": policy.namespace}
    if policy.pause_created:
        metadata["annotations"] = {PAUSE_CREATED_ANNOTATION: PAUSE_CREATED_VALUE}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": metadata,
        "spec": policy.spec.model_dump(mode="json", exclude_none=True),
    }


def _pause_created(annotations: object) -> bool:
    return (
        isinstance(annotations, Mapping)
        and annotations.get(PAUSE_CREATED_ANNOTATION) == PAUSE_CREATED_VALUE
    )


def _location(part: str | int) -> str:
    """One step of an error's path as written: a field name or index as it is, a key that
    came from outside (an unknown field) quoted and cut short when it is not plain."""
    text = str(part)
    if len(text) <= _KEY_SHOWN_CHARS and text.isascii() and text.isprintable():
        return text
    return repr(text[:_KEY_SHOWN_CHARS]) + ("..." if len(text) > _KEY_SHOWN_CHARS else "")


def _shown(value: object) -> str:
    """A value from the object, for a message: a short text with control characters escaped,
    or the JSON type of anything else (whose repr may be huge or nest too deep)."""
    if value is None:
        return "(none)"
    if not isinstance(value, str):
        return f"a JSON {_json_type(value)}"
    text = repr(value[:_KEY_SHOWN_CHARS])
    return text if len(value) <= _KEY_SHOWN_CHARS else text + "..."


def _json_type(value: object) -> str:
    names = {list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _read_status(raw: object) -> UpdatePolicyStatus | None:
    """The status the controller wrote; an unreadable one counts as none (it is rewritten)."""
    if not raw or nests_deeper_than(raw):
        return None
    try:
        return UpdatePolicyStatus.model_validate(raw)
    except ValidationError:
        return None


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
