"""Where a simulation writes its files (`--report`, `--timeline`), checked before it starts, so
that a long run's report or picture is not lost to a typo."""

from __future__ import annotations

import os
from pathlib import Path

from brupop.adapters.timeline_picture import PicturePathError, check_picture_path


class PathRefused(ValueError):
    """The run could not write there; the message names the flag."""


def picture_path(raw: str) -> Path:
    """The timeline's file: .svg or .png, in a directory that exists and can be written."""
    try:
        return check_picture_path(raw)
    except PicturePathError as error:
        raise PathRefused(f"--timeline: {error}") from None


def report_path(raw: str) -> Path:
    """A file this run can write at its end: checked now, so that a long run's report and
    summary are not lost to a typo."""
    path = Path(raw).expanduser()
    if path.is_dir():
        raise PathRefused(
            f"--report: {raw} is a directory; give a file name, like {path}/report.json"
        )
    if path.exists() and not os.access(path, os.W_OK):
        raise PathRefused(f"--report: {raw} is not writable")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent  # the report's directories are made at the end
    if not parent.is_dir():
        raise PathRefused(f"--report: {raw} cannot be created: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PathRefused(f"--report: {raw} cannot be created: {parent} is not writable")
    return path
