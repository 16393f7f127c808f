"""`brupop simulate --policy FILE`: the BottlerocketUpdatePolicy a user would apply, read and
checked by the same reader the controller uses, so a file simulate accepts is one the
controller would use (and a file it refuses, one the controller would ignore). A key written
twice in one mapping is refused, naming the key: YAML parsers commonly keep the last one
silently, and kubectl refuses such a file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from brupop.domain.policy.policy_object import PolicyObjectError, policy_from_object
from brupop.domain.policy.update_policy import DEFAULT_POLICY_NAME

POLICY_FILE_MAX_BYTES = 256 * 1024
_KEY_SHOWN_CHARS = 64
_MERGE_TAG = "tag:yaml.org,2002:merge"


class PolicyFileError(ValueError):
    """The file cannot be used as the policy; the message says why, in one line."""


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping of the file holds the same key twice."""

    def __init__(self, key: object, mark: yaml.Mark) -> None:
        shown = repr(key)[:_KEY_SHOWN_CHARS]
        super().__init__(None, None, f"the key {shown} appears twice in one mapping", mark)


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that holds one key twice."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue  # merge keys may repeat; other node keys are refused by PyYAML
            key = self.construct_object(key_node)
            if key in seen:
                raise DuplicateKeyError(key, key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_policy_file(path: Path) -> dict[str, Any]:
    """The policy's wire object (the document in the file), once it has passed every check."""
    try:
        with path.open("rb") as source:
            raw = source.read(POLICY_FILE_MAX_BYTES + 1)
    except OSError as error:
        raise PolicyFileError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(raw) > POLICY_FILE_MAX_BYTES:
        raise PolicyFileError(f"{path}: larger than {POLICY_FILE_MAX_BYTES} bytes")
    try:
        documents = [doc for doc in yaml.load_all(raw, Loader=UniqueKeyLoader) if doc is not None]
    except DuplicateKeyError as error:
        line = error.problem_mark.line + 1 if error.problem_mark is not None else "?"
        raise PolicyFileError(f"{path}: {error.problem} (line {line})") from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise PolicyFileError(f"{path}: not valid YAML{line}") from None
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
