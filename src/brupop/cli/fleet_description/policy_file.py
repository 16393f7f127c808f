"""`brupop simulate --policy FILE`: the BottlerocketUpdatePolicy a user would apply, read and
checked by the same reader the controller uses, so a file simulate accepts is one the
controller would use (and a file it refuses, one the controller would ignore). Its YAML is read
within bounds (`bounded_yaml`): no key twice in one mapping, no alias bomb, no deep nesting."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from brupop.adapters.system.bounded_yaml import YamlRefused, load_yaml_file
from brupop.domain.policy.policy_object import PolicyObjectError, policy_from_object
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME

POLICY_FILE_MAX_BYTES = 256 * 1024
POLICY_FILE_MAX_VALUES = 65_536  # counted with every alias expanded, as a reader walks them


class PolicyFileError(ValueError):
    """The file cannot be used as the policy; the message says why, in one line."""


def load_policy_file(path: Path) -> dict[str, Any]:
    """The policy's wire object (the document in the file), once it has passed every check."""
    try:
        documents = load_yaml_file(
            path, max_bytes=POLICY_FILE_MAX_BYTES, max_values=POLICY_FILE_MAX_VALUES
        )
    except YamlRefused as error:
        raise PolicyFileError(f"{path}: {error}") from None
    if len(documents) != 1 or not isinstance(documents[0], Mapping):
        raise PolicyFileError(f"{path}: expected one BottlerocketUpdatePolicy object")
    obj = dict(documents[0])
    try:
        policy = policy_from_object(obj)
    except PolicyObjectError as error:
        raise PolicyFileError(f"{path}: {error}") from None
    if not policy.is_default:
        raise PolicyFileError(
            f"{path}: metadata.name is {policy.name!r}; brupop follows only the policy "
            f"named {DEFAULT_POLICY_NAME!r}"
        )
    if policy.spec is None:
        raise PolicyFileError(f"{path}: {policy.problem}")
    obj.pop("status", None)
    return obj
