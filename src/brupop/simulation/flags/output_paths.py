"""Where a simulation writes (`--report`, `--timeline`, `--log-dir`, `--work-dir`), checked
before it starts, the same way for each, so that a long run's report or picture is not lost to
a typo: missing folders are made, and the nearest existing one must take a new file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from brupop.adapters.system.writable_paths import (
    PathUnwritable,
    check_file_path,
    check_folder_path,
)
from brupop.adapters.timeline_picture import PicturePathError, check_picture_path


class PathRefused(ValueError):
    """The run could not write there; the message names the flag."""


def picture_path(raw: str) -> Path:
    """--timeline: .svg or .png, somewhere this run can write."""
    try:
        return check_picture_path(raw)
    except PicturePathError as error:
        raise PathRefused(f"--timeline: {error}") from None


def report_path(raw: str) -> Path:
    """--report: a file this run can write at its end."""
    return _checked("--report", check_file_path, raw)


def log_dir_path(raw: str) -> Path:
    """--log-dir: a folder for the agents' and the cluster's logs."""
    return _checked("--log-dir", check_folder_path, raw)


def work_dir_path(raw: str) -> Path:
    """--work-dir: a folder for certificates, tokens and host state."""
    return _checked("--work-dir", check_folder_path, raw)


def _checked(flag: str, check: Callable[[str], Path], raw: str) -> Path:
    try:
        return check(raw)
    except PathUnwritable as error:
        raise PathRefused(f"{flag}: {error}") from None
