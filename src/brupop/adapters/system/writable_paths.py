"""Whether a command can write where it was told to, checked before it starts.

One rule for every output path: missing folders are made (when the output is written), and the
nearest folder that exists must take a new file, which is tested by making one and removing it
(permission bits lie to root, and /proc refuses files whatever they say).
"""

from __future__ import annotations

import tempfile
from pathlib import Path


class PathUnwritable(ValueError):
    """Nothing can be written there; the message says why."""


def check_file_path(raw: str) -> Path:
    """The path of a file to write (a report, a picture), if it can be written."""
    path = Path(raw).expanduser()
    if path.is_dir():
        raise PathUnwritable(f"{raw} is a directory; give a file name in it")
    if path.exists():
        try:
            with path.open("ab"):  # append mode changes nothing
                pass
        except OSError as error:
            reason = (error.strerror or str(error)).lower()
            raise PathUnwritable(f"{raw} exists and cannot be written ({reason})") from None
        return path
    _check_can_create(raw, path.parent)
    return path


def check_folder_path(raw: str) -> Path:
    """The path of a folder to write files in (logs, a work directory), if it can be."""
    path = Path(raw).expanduser()
    if path.exists() and not path.is_dir():
        raise PathUnwritable(f"{raw} is a file, not a directory")
    _check_can_create(raw, path)
    return path


def _check_can_create(raw: str, folder: Path) -> None:
    """The nearest existing folder of `folder` (itself, or a parent) takes a new file."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise PathUnwritable(f"{raw} cannot be made: {existing} is a file, not a directory")
    try:
        with tempfile.TemporaryFile(dir=existing, prefix=".brupop-check-"):
            pass
    except OSError as error:
        raise PathUnwritable(f"{raw} cannot be written: {existing} {_why(error)}") from None


def _why(error: OSError) -> str:
    """`refuses new files (permission denied)`: the errno's words, not its number."""
    return f"refuses new files ({(error.strerror or str(error)).lower()})"
