"""The release finds what an image's processes load by importing its entrypoints with the
root's own Python (scripts/release/rootfs.py). Here a small root stands in for an image's:
its Python is this machine's, its site-packages holds two modules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from scripts.release import rootfs

SITE = Path("opt/brupop/lib/python3.11/site-packages")


def small_root(tmp_path: Path) -> Path:
    """A root whose entrypoint `entry` imports `needed`, and whose `unused` nobody imports."""
    root = tmp_path / "root"
    site = root / SITE
    site.mkdir(parents=True)
    (site / "entry.py").write_text("import needed\n")
    (site / "needed.py").write_text("ANSWER = 42\n")
    (site / "unused.py").write_text("ANSWER = 0\n")
    (root / "usr" / "lib" / "python3.11").mkdir(parents=True)
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "usr" / "bin" / "python3.11").symlink_to(sys.executable)
    return root


def test_the_probe_lists_the_roots_modules_its_entrypoints_load_and_leaves_no_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = small_root(tmp_path)
    monkeypatch.setitem(rootfs.ENTRYPOINTS, "small", ("entry",))

    loaded = rootfs.loaded_modules(root, "small", [])

    assert sorted(path.name for path in loaded) == ["entry.py", "needed.py"]
    # The bytecode compiled to speed the probe up went to a throwaway cache, not into the root.
    assert not list(root.rglob("*.pyc"))


def test_a_probe_that_runs_out_of_time_is_one_error_naming_the_image_and_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = small_root(tmp_path)
    monkeypatch.setitem(rootfs.ENTRYPOINTS, "small", ("entry",))
    monkeypatch.setattr(rootfs, "PROBE_SECONDS", 1)
    stalled = [sys.executable, "-c", "import time; time.sleep(60)"]  # an emulator that hangs

    with pytest.raises(RuntimeError) as raised:
        rootfs.loaded_modules(root, "small", stalled)

    assert str(raised.value) == "the small root's Python did not import its entrypoints in 1 s"
