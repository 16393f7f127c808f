"""Reading a kubeconfig, and saying in one line why it cannot be used.

The official client answers a broken kubeconfig with whatever its parser raised: a YAML error
over three lines, a TypeError for a list where a mapping belongs, a UnicodeDecodeError for a
binary file. A command given such a file should name the file and the problem, in one line.
Each file is first read within bounds of size, nesting and aliases: the client would follow an
alias bomb for over a minute, where kubectl refuses "excessive aliasing".
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml
from kubernetes import config as kube_config
from kubernetes.client import Configuration
from kubernetes.config.config_exception import ConfigException

from brupop.adapters.system.bounded_yaml import YamlRefused, YamlTooLarge, load_yaml_file
from brupop.ports.errors import UnavailableError

DEFAULT_KUBECONFIG = "~/.kube/config"
KUBECONFIG_MAX_BYTES = 16 * 1024 * 1024
KUBECONFIG_MAX_VALUES = 1_048_576  # counted with every alias expanded
_PROBLEM_CHARS = 160

# What the client's loader raises for a file it cannot read or make sense of.
_LOAD_ERRORS = (
    ConfigException,
    OSError,
    yaml.YAMLError,
    UnicodeDecodeError,
    TypeError,
    AttributeError,
    KeyError,
    ValueError,
)


class KubeconfigUnusable(UnavailableError):
    """A kubeconfig exists but cannot be used; the message names it and says why."""

    def __init__(self, location: str, problem: str) -> None:
        super().__init__(f"the kubeconfig {location} cannot be used: {problem}")
        self.location = location


def kubeconfig_location() -> str:
    """$KUBECONFIG (one or more files, `:`-separated), else ~/.kube/config, as kubectl reads."""
    return os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG


def kubeconfig_exists(location: str) -> bool:
    """Whether any file `location` names exists (none: there is no configuration at all)."""
    return any(Path(part).expanduser().exists() for part in location.split(os.pathsep) if part)


def load_kubeconfig(
    configuration: Configuration, location: str | None = None, context: str | None = None
) -> None:
    """Fill `configuration` from the kubeconfig at `location` (None: as kubectl finds it), with
    its current context or `context`.

    KubeconfigUnusable when a file exists but cannot be used; UnavailableError when none does.
    """
    location = location or kubeconfig_location()  # read now, not at import
    _check_bounds(location)
    try:
        kube_config.load_kube_config(
            config_file=location,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    except _LOAD_ERRORS as error:
        if not kubeconfig_exists(location):
            raise UnavailableError(f"no kubeconfig at {location}") from None
        raise KubeconfigUnusable(location, load_problem(error)) from None


def _check_bounds(location: str) -> None:
    """KubeconfigUnusable for an existing file past the bounds; anything else wrong with it is
    for the client to find, as its own messages say it best (`load_problem`)."""
    for part in location.split(os.pathsep):
        path = Path(part).expanduser()
        if not part or not path.is_file():
            continue
        try:
            load_yaml_file(
                path,
                max_bytes=KUBECONFIG_MAX_BYTES,
                max_values=KUBECONFIG_MAX_VALUES,
                unique_keys=False,
            )
        except YamlTooLarge as error:
            raise KubeconfigUnusable(location, str(error)) from None
        except YamlRefused:
            continue


def load_problem(error: Exception) -> str:
    """One short line for what the loader raised."""
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return f"it is not valid YAML: {error.problem or error.context}{where}"
    if isinstance(error, yaml.YAMLError | UnicodeDecodeError):
        return "it is not valid YAML text"
    if isinstance(error, TypeError | AttributeError | KeyError):
        return "it is YAML, but not a kubeconfig (clusters, users, contexts, current-context)"
    text = " ".join(str(error).split())
    if isinstance(error, ConfigException):
        text = _config_problem(text)
    return text if len(text) <= _PROBLEM_CHARS else text[: _PROBLEM_CHARS - 3] + "..."


_MISSING_KEY = re.compile(r"Expected key (?P<key>\S+) in ")
_MISSING_NAME = re.compile(
    r"Expected object with name (?P<name>\S*) in (?:\S*/)?(?P<list>\w+?)s? list"
)


def _config_problem(text: str) -> str:
    """The client's `Invalid kube-config file. Expected ...` (which repeats the file name) as
    what is missing, in a few words."""
    if key := _MISSING_KEY.search(text):
        if key["key"] == "current-context":
            return "it sets no current-context (pass --context NAME, or kubectl config use-context)"
        return f"it has no {key['key']!r} where one is needed"
    if named := _MISSING_NAME.search(text):
        return f"it has no {named['list']} named {named['name']!r}"
    return text.removeprefix("Invalid kube-config file. ")
