"""What one `apiclient raw` run means: a decoded answer or a typed HostApiError, never a crash.

Pure functions over a CommandResult, so property tests can feed them any bytes, exit code or
signal. Only `TransientHostError` (lock held, or no HTTP status at all) is worth retrying.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from brupop.adapters.apiclient import host_answers
from brupop.adapters.apiclient.host_answers import Refusal
from brupop.domain.boot_mode import BootMode, read_fips_report
from brupop.domain.host.command_result import CommandResult
from brupop.domain.host.host import HostUpdateStatus, OsInfo, UpdateImage
from brupop.domain.host_kind import HostClass, classify_settings_answer
from brupop.domain.versions import is_version
from brupop.ports.errors import (
    HostCommandKilledError,
    HostRejectedError,
    HostResponseError,
    HostStateConflictError,
    HostUnavailableError,
)

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any, TypeVar

    _Model = TypeVar("_Model")

HTTP_NOT_FOUND = 404
REPORT_MAX_CHARACTERS = 100_000  # a FIPS report is a few hundred bytes


class TransientHostError(HostUnavailableError):
    """The host could not answer now (423, or a failure without an HTTP status): retry later."""


def raise_for_failure(result: CommandResult) -> None:
    """Return when apiclient exited 0; raise the typed error its failure means otherwise."""
    if result.signal is not None:
        raise HostCommandKilledError(
            f"apiclient was killed: {result.describe()}", signal=result.signal, result=result
        )
    if result.succeeded():
        return
    if result.update_lock_held():
        raise TransientHostError(f"update lock held: {result.describe()}", result)
    status = result.http_status()
    if status is None:
        raise TransientHostError(f"host API unreachable: {result.describe()}", result)
    meaning = host_answers.refusal(status)
    if meaning is Refusal.LOCK_HELD:
        raise TransientHostError(f"update lock held: {result.describe()}", result)
    if meaning is Refusal.NOT_IN_THIS_STATE:
        raise HostStateConflictError(
            f"host state changed: {result.describe()}", status=status, result=result
        )
    raise HostRejectedError(f"host refused: {result.describe()}", status=status, result=result)


def check_accepted(result: CommandResult) -> None:
    """A POST the host accepted (204); its output, if any, carries nothing we need."""
    raise_for_failure(result)


def unexpected_output(result: CommandResult, *, longest: int = 80) -> str:
    """A POST the host accepted: what it printed, shortened, though a 204 has no body ('' if
    nothing). Kept to explain a command the host then never records."""
    raise_for_failure(result)
    printed = result.stdout.strip()
    return printed if len(printed) <= longest else printed[: longest - 3] + "..."


def parse_os_info(result: CommandResult) -> OsInfo:
    """`GET /os` -> OsInfo with a semantic version_id."""
    raise_for_failure(result)
    info = _decode(result, OsInfo.from_json, "OsInfo")
    if not is_version(info.version_id):
        raise HostResponseError(f"host reports version {info.version_id[:80]!r}", result)
    return info


def parse_update_status(result: CommandResult) -> HostUpdateStatus | None:
    """`GET /updates/status` -> the status, or None when the host has none yet (404)."""
    try:
        raise_for_failure(result)
    except HostRejectedError as error:
        if error.status == HTTP_NOT_FOUND:
            return None
        raise
    status = _decode(result, HostUpdateStatus.from_json, "HostUpdateStatus")
    images = [status.chosen_update] + [
        partition.image
        for partition in (status.active_partition, status.staging_partition)
        if partition is not None
    ]
    if not all(_versioned(image) for image in images):
        raise HostResponseError("host reports an image without a semantic version", result)
    return status


def parse_host_class(result: CommandResult) -> HostClass:
    """`GET /settings?prefix=settings.updates` -> the host's kind. A refusal with a status code
    is an answer (a locked-down host's 500 among them); no status at all is transient."""
    if result.signal is not None or result.http_status() is None:
        raise_for_failure(result)
    if not result.succeeded():
        return classify_settings_answer(result.http_status(), result.stderr[:2000], None)
    try:
        document = json.loads(result.stdout.strip()[:100_000] or "null")
    except (ValueError, RecursionError):
        document = None
    return classify_settings_answer(200, "", document)


def parse_boot_mode(result: CommandResult) -> BootMode | None:
    """`GET /report/fips?format=json` -> the host's boot mode. A refusal with a status code (a
    release without the report: 404; its checker missing: 500) shows no mode; no status at all
    is transient; an answer that is not a report shows none either."""
    try:
        raise_for_failure(result)
    except (HostRejectedError, HostStateConflictError):
        return None
    try:
        document = json.loads(result.stdout.strip()[:REPORT_MAX_CHARACTERS] or "null")
    except (ValueError, RecursionError):
        return None
    return read_fips_report(document)


def _versioned(image: UpdateImage | None) -> bool:
    return image is None or is_version(image.version)


def _decode(result: CommandResult, read: Callable[[Any], _Model], name: str) -> _Model:
    """The model `read` makes of the JSON on stdout; HostResponseError when it cannot."""
    text = result.stdout.strip()
    if not text:
        raise HostResponseError(f"empty answer: {result.describe()}", result)
    try:
        return read(json.loads(text))
    except (ValueError, RecursionError) as error:  # JSONDecodeError and WireFormatError too
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise HostResponseError(f"not a valid {name}: {reason}: {text[:120]!r}", result) from None
