"""`python3 -m scripts.release.check ARCHIVE IMAGE ARCH FIGURES`: load one OCI archive into
podman and check the image from the inside, as its user (uid 10001) on a read-only root with
a writable /tmp (as the chart runs it). A foreign architecture runs under Debian's qemu-user-static,
copied into the scratch copy of the root only (no binfmt registration). Prints each check,
appends a JSON line of figures to FIGURES; exits 1 on the first failure."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scripts.release import sbom

REPO = Path(__file__).resolve().parents[2]
LIMITS_MB = {"agent": 60, "control": 180}
QEMU = {"arm64": "qemu-aarch64-static"}
FORBIDDEN = ("bin/sh", "usr/bin/sh", "bin/bash", "usr/bin/dpkg", "usr/bin/apt", "usr/bin/apt-get")
ENTRYPOINTS = {"agent": ("agent",), "control": ("controller", "apiserver")}
SCENARIO_FILES = ("tests/__init__.py", "tests/support", "tests/fakes")
# The codecs the processes use (JSON and HTTP in UTF-8 and ASCII, host names through IDNA, the
# Latin-1 of HTTP headers), the locale's and the file system's encoding, each run in the image:
# glibc's charset modules are left out of it (scripts/release/debian.py PRUNED).
CODECS = (
    "import codecs, locale, sys; text = 'n\u0153ud-\u00e9t\u00e9 \u2713'; "
    "assert all(text.encode(c).decode(c) == text for c in ('utf-8', 'utf-16', 'utf-32')); "
    "assert 'abc'.encode('ascii') == b'abc' and '\u00e9'.encode('latin-1') == b'\\xe9'; "
    "assert 'b\u00fccher.example'.encode('idna') == b'xn--bcher-kva.example'; "
    "assert sys.getfilesystemencoding() == 'utf-8', sys.getfilesystemencoding(); "
    "assert codecs.lookup(locale.getpreferredencoding(False)).name == 'utf-8'; "
    "print('codecs ok')"
)
DEVICES = ("null", "zero", "urandom", "random")


class CheckFailed(RuntimeError):
    """The image does not do what a check expects."""


def podman(*args: str) -> str:
    result = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=600,
                            check=False)  # fmt: skip
    if result.returncode != 0:
        raise CheckFailed(f"podman {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout.strip()


@contextmanager
def scratch_root(tag: str, arch: str) -> Iterator[Path]:
    """A copy of the image's root, mounted read-only, with a writable /tmp, the scenario's
    files under /opt/brupop-checks and (for arm64) qemu."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="brupop-check.") as scratch:
        root, tmp = Path(scratch) / "root", Path(scratch) / "tmp"
        mounted = podman("image", "mount", tag)
        try:
            subprocess.run(["cp", "-a", f"{mounted}/.", str(root)], check=True, timeout=300)
        finally:
            podman("image", "unmount", tag)
        checks = root / "opt" / "brupop-checks"
        for name in SCENARIO_FILES:
            source, target = REPO / name, checks / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(source, target)
        shutil.copy(REPO / "scripts" / "release" / "seed_in_image.py", checks)
        # The host emulator (a test tool) compares versions with semver, which the agent
        # image leaves out: the checks bring it along with the scenario (pure Python).
        spec = importlib.util.find_spec("semver")
        if spec is None or spec.origin is None:
            raise CheckFailed("semver is missing from the Python running the checks")
        semver = Path(spec.origin).parent
        shutil.copytree(semver, checks / "semver", ignore=shutil.ignore_patterns("__pycache__"))
        launcher = f"/usr/bin/{QEMU[arch]} " if arch in QEMU else ""
        (checks / "apiclient").write_text(
            f"#!{launcher}/opt/brupop/bin/python\n"
            "import sys\nfrom brupop.hostsim.__main__ import main\nsys.exit(main())\n"
        )
        (checks / "apiclient").chmod(0o755)
        if arch in QEMU:
            qemu = shutil.which(QEMU[arch])
            if qemu is None:
                raise CheckFailed(f"{QEMU[arch]} is missing (apt-get install qemu-user-static)")
            shutil.copy(qemu, root / "usr" / "bin")
        tmp.mkdir(mode=0o1777)
        tmp.chmod(0o1777)
        for device in DEVICES:  # what a container runtime gives /dev
            (root / "dev" / device).touch()
        mounts = [
            ["mount", "--bind", str(root), str(root)],
            ["mount", "-o", "remount,bind,ro", str(root)],
            ["mount", "--bind", str(tmp), str(root / "tmp")],
            *(["mount", "--bind", f"/dev/{d}", str(root / "dev" / d)] for d in DEVICES),
        ]
        try:
            for command in mounts:
                subprocess.run(command, check=True, timeout=30)
            yield root
        finally:
            for target in (*(root / "dev" / d for d in DEVICES), root / "tmp", root):
                subprocess.run(["umount", "-l", str(target)], check=False, timeout=30)


def run(root: Path, arch: str, argv: list[str], env: dict[str, str]) -> tuple[int, str]:
    """`argv` in the root as uid 10001, with the image's Python run by qemu when foreign."""
    launcher = [f"/usr/bin/{QEMU[arch]}"] if arch in QEMU else []
    if launcher and argv[0] == "brupop":
        argv = ["/opt/brupop/bin/python", "/opt/brupop/bin/brupop", *argv[1:]]
    chroot = shutil.which("chroot") or "/usr/sbin/chroot"
    variables = [f"{k}={v}" for k, v in env.items()]
    command = ["env", "-i", *variables, chroot, "--userspec=10001:10001", str(root)]
    command += [*launcher, *argv]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    return result.returncode, result.stdout + result.stderr


def expect(root: Path, arch: str, env: dict[str, str], code: int, text: str, *argv: str) -> None:
    got, output = run(root, arch, list(argv), env)
    if got != code or text not in output:
        raise CheckFailed(f"`{' '.join(argv)}` exited {got} (expected {code}, saying {text!r}): "
                          f"{output.strip()[-1500:]}")  # fmt: skip
    print(f"   ok: `{' '.join(argv)}` -> exit {got}", flush=True)


def seed_scenario(root: Path, arch: str, env: dict[str, str]) -> None:
    """The agent asks for the reboot; SIGTERM kills apiclient and it; it exits 0, one INFO line."""
    launcher = [f"/usr/bin/{QEMU[arch]}"] if arch in QEMU else []
    driver = ["/opt/brupop/bin/python", "/opt/brupop-checks/seed_in_image.py", *launcher]
    code, output = run(root, arch, driver, {**env, "PYTHONPATH": "/opt/brupop-checks"})
    if code != 0:
        raise CheckFailed(f"the seed scenario's driver failed: {output[-2000:]}")
    result = json.loads(output.strip().splitlines()[-1])
    lines = result["lines"]
    reboot = [line for line in lines if line.get("event") == "node.rebooting_into_update"]
    loud = [line for line in lines if line.get("level") in ("warning", "error", "critical")]
    if result["code"] != 0 or len(reboot) != 1 or reboot[0]["level"] != "info" or loud \
            or "Traceback" in result["stderr"] or result["version"] != "1.1.0":  # fmt: skip
        raise CheckFailed(f"the seed scenario: {json.dumps(result)[-2000:]}")
    print(f"   ok: seed scenario -> agent exit 0, one INFO line ({len(lines)} lines in all)")


def figures(root: Path, tag: str, image: str, arch: str) -> dict[str, Any]:
    """Size (podman's, uncompressed) and the SBOM's counts."""
    size = int(podman("image", "inspect", "--format", "{{.Size}}", tag))
    document = json.loads((root / sbom.PATH_IN_IMAGE).read_text())
    kinds = [c.get("purl", "").split("/")[0] for c in document["components"]]
    return {"image": f"{image}-{arch}", "size_mb": round(size / 1e6, 1),
            "goal_mb": LIMITS_MB[image],
            "sbom_python": kinds.count("pkg:pypi"), "sbom_deb": kinds.count("pkg:deb")}  # fmt: skip


def check(archive: Path, image: str, arch: str) -> dict[str, Any]:
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    tag = f"localhost/brupop-{image}:{version}-{arch}"
    loaded = podman("load", "-q", "-i", str(archive))
    if tag not in loaded:
        raise CheckFailed(f"{archive} holds {loaded!r}, not {tag}")
    config = json.loads(podman("image", "inspect", tag))[0]
    if config["Config"].get("User") != "10001:10001":
        raise CheckFailed(f"{tag} runs as {config['Config'].get('User')!r}, not 10001:10001")
    if config["Architecture"] != arch:
        raise CheckFailed(f"{tag} is for {config['Architecture']}, not {arch}")
    label = config["Config"]["Labels"].get("org.opencontainers.image.version")
    if label != version:
        raise CheckFailed(f"{tag}'s org.opencontainers.image.version is {label!r}, not {version}")
    env = dict(line.split("=", 1) for line in config["Config"]["Env"])
    with scratch_root(tag, arch) as root:
        print(
            f"== check {tag} (as uid 10001, read-only root{', under qemu' if arch in QEMU else ''})"
        )
        present = [name for name in FORBIDDEN if (root / name).exists()]
        if present:
            raise CheckFailed(f"{tag} holds {', '.join(present)}: no shell, no package manager")
        expect(root, arch, env, 0, version, "brupop", "--version")
        expect(root, arch, env, 0, "usage: brupop", "brupop", "--help")
        expect(root, arch, env, 2, "MY_NODE_NAME", "brupop", "agent")
        expect(root, arch, env, 0, "codecs ok", "/opt/brupop/bin/python", "-c", CODECS)
        expect(root, arch, env, 2, "pip install 'brupop[simulate]'", "brupop", "simulate")
        for process in ENTRYPOINTS[image]:
            module = f"brupop.entrypoints.{process}.main"
            expect(root, arch, env, 0, "", "/opt/brupop/bin/python", "-c", f"import {module}")
        inside = json.loads((root / sbom.PATH_IN_IMAGE).read_text())
        beside = json.loads(
            archive.with_name(archive.name.replace(".oci.tar", ".cdx.json")).read_text()
        )
        if inside != beside:
            raise CheckFailed(f"{tag}: the SBOM inside differs from the one beside the archive")
        if gaps := sbom.missing(root, inside):
            raise CheckFailed(f"{tag}: the SBOM misses {', '.join(gaps)}")
        print("   ok: the SBOM lists every Python package and .deb of the image")
        if image == "agent":
            seed_scenario(root, arch, env)
        return figures(root, tag, image, arch)


def main() -> int:
    archive, image, arch, figures_file = Path(sys.argv[1]), *sys.argv[2:4], Path(sys.argv[4])
    try:
        found = json.dumps(check(archive, image, arch))
        with figures_file.open("a", encoding="utf-8") as out:
            out.write(found + "\n")
    except (CheckFailed, subprocess.SubprocessError, OSError) as error:
        print(f"check: FAILED: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
