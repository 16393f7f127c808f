"""brupop's virtual environment for an image: wheels chosen for the image's architecture by
`pip install --platform ... --only-binary=:all: --target`, laid out as a venv over the image's
Debian Python (/usr/bin/python3.11), with console scripts that name the venv's interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

VENV = "opt/brupop"
SITE = f"{VENV}/lib/python3.11/site-packages"
PLATFORMS = {"amd64": "x86_64", "arm64": "aarch64"}
GLIBC_MINOR = 36  # Debian 12's glibc: wheels for 2.17 up to it run
# The agent imports nothing outside the standard library (the lean-agent contract in
# .importlinter forbids pydantic too); the control image takes every runtime dependency.
AGENT_DISTRIBUTIONS: tuple[str, ...] = ()


def requirements(pyproject: Path, image: str) -> list[str]:
    """The runtime requirement lines of `image`, as pyproject.toml pins them."""
    lines: list[str] = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"][
        "dependencies"
    ]
    if image == "control":
        return lines
    return [line for line in lines if _distribution(line) in AGENT_DISTRIBUTIONS]


def _distribution(line: str) -> str:
    name = line
    for mark in "<>=!~[; ":
        name = name.split(mark)[0]
    return name.lower().replace("_", "-")


def build_wheel(repo: Path, out: Path, cache: Path) -> Path:
    """brupop's own wheel (pure Python), built from the source tree."""
    out.mkdir(parents=True, exist_ok=True)
    _pip(["wheel", "--no-deps", "--wheel-dir", str(out), str(repo)], cache)
    (wheel,) = out.glob("brupop-*.whl")
    return wheel


def install(root: Path, wheel: Path, lines: list[str], architecture: str, cache: Path) -> None:
    """The venv at `root`/opt/brupop: `lines` with their dependencies, and brupop itself
    without its dependencies (the agent image leaves most of them out)."""
    site = root / SITE
    platform = [
        arg
        for glibc in range(GLIBC_MINOR, 16, -1)  # pip takes each tag as given, no older ones
        for arg in ("--platform", f"manylinux_2_{glibc}_{PLATFORMS[architecture]}")
    ]
    target = [
        "install", "--quiet", "--no-compile", "--only-binary=:all:", *platform,
        "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
    ]  # fmt: skip
    if lines:
        _pip([*target, "--target", str(site), *lines], cache)
    site.mkdir(parents=True, exist_ok=True)
    scratch = root.parent / f"{root.name}.brupop"
    _pip([*target, "--no-deps", "--target", str(scratch), str(wheel)], cache)
    for entry in scratch.iterdir():
        if entry.name != "bin":
            entry.rename(site / entry.name)
    _write_venv(root, scratch / "bin")
    shutil.rmtree(scratch)


def _write_venv(root: Path, scripts: Path) -> None:
    venv = root / VENV
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    (venv / "pyvenv.cfg").write_text(
        "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n",
        encoding="utf-8",
    )
    for name in ("python", "python3", "python3.11"):
        (venv / "bin" / name).symlink_to("/usr/bin/python3.11")
    (venv / "lib64").symlink_to("lib")
    for script in scripts.iterdir():
        _, _, body = script.read_text(encoding="utf-8").partition("\n")
        target = venv / "bin" / script.name
        target.write_text(f"#!/{VENV}/bin/python\n{body}", encoding="utf-8")
        target.chmod(0o755)


def _pip(args: list[str], cache: Path) -> None:
    env = {**os.environ, "PIP_CACHE_DIR": str(cache / "pip"), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    subprocess.run([sys.executable, "-m", "pip", *args], env=env, check=True, timeout=900)
