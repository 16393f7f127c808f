"""A bench run's scratch directory: made fresh, removed after a run that succeeds, kept (and
named) after one that fails, so its logs can be read."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rig import progress


def measure_in_work_dir(prefix: str, measure: Callable[[Path], dict[str, Any]]) -> dict[str, Any]:
    """`measure(work)` in a new temporary directory named with `prefix`; its result."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        result = measure(work)
    except Exception:
        progress(f"failed; files kept in {work}")
        raise
    shutil.rmtree(work, ignore_errors=True)
    return result
