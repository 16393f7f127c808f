"""`python3 -m scripts.release roots OUT`: the root file system of each image and architecture,
OUT/<image>-<arch>/root, with its SBOM beside it (OUT/<image>-<arch>/sbom.cdx.json).

A root is: the Debian packages of debian.py unpacked, the accounts and the CA bundle, brupop's
venv for that architecture, bytecode for what the image's processes load, and the SBOM at
/usr/share/brupop/sbom.cdx.json. Downloads are cached under --cache. scripts/build-images
runs it and makes OCI archives of the roots.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from scripts.release import debian, rootfs, sbom, venv

REPO = Path(__file__).resolve().parents[2]


def version() -> str:
    """The package version: pyproject.toml is its one source."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["version"])


def build_root(options: argparse.Namespace, image: str, arch: str, wheel: Path) -> dict[str, int]:
    """One image's root under OUT/<image>-<arch>; returns its counts for the log."""
    home = options.out.resolve() / f"{image}-{arch}"
    if home.exists():
        shutil.rmtree(home)
    root = home / "root"
    apt = debian.PrivateApt(options.cache, arch)
    apt.update(options.mirror, options.security_mirror, options.lists_max_age)
    packages = apt.describe(apt.closure(debian.ROOTS + debian.EXTRA[image]))
    debs = apt.download(packages)
    debian.unpack(debs, root)
    debian.record(debs, root)
    pruned = debian.prune(root)
    rootfs.write_accounts(root)
    certificates = rootfs.write_ca_bundle(root)
    venv.install(
        root, wheel, venv.requirements(REPO / "pyproject.toml", image), arch, options.cache
    )
    launcher = ["qemu-aarch64-static", "-L", str(root)] if arch == "arm64" else []
    modules = rootfs.loaded_modules(root, image, launcher)
    rootfs.compile_modules(root, modules, rootfs.OPTIMIZATION[image])
    python = sbom.python_components(options.generator, root, REPO / "pyproject.toml")
    document = sbom.merge(python, root, image, version())
    text = json.dumps(document, indent=2) + "\n"
    (home / "sbom.cdx.json").write_text(text, encoding="utf-8")
    inside = root / sbom.PATH_IN_IMAGE
    inside.parent.mkdir(parents=True, exist_ok=True)
    inside.write_text(text, encoding="utf-8")
    gaps = sbom.missing(root, document)
    if gaps:
        raise SystemExit(f"release: the {image}-{arch} SBOM misses {', '.join(gaps)}")
    return {
        "debs": len(packages),
        "python_packages": sum(
            1 for c in document["components"] if "pkg:pypi" in c.get("purl", "")
        ),
        "ca_certificates": certificates,
        "compiled_modules": len(modules),
        "pruned_bytes": pruned,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m scripts.release")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("version", help="print the package version")
    roots = commands.add_parser("roots", help="build image roots")
    roots.add_argument("out", type=Path)
    roots.add_argument("--arch", action="append", choices=["amd64", "arm64"])
    roots.add_argument("--image", action="append", choices=["agent", "control"])
    roots.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "brupop-image")
    roots.add_argument("--generator", type=Path, required=False)
    roots.add_argument("--mirror", default="http://deb.debian.org/debian")
    roots.add_argument("--security-mirror", default="http://deb.debian.org/debian-security")
    roots.add_argument("--lists-max-age", type=float, default=86400.0)
    options = parser.parse_args(argv)
    if options.command == "version":
        print(version())
        return 0
    options.generator = options.generator or options.cache / "sbom-tool" / "bin" / "cyclonedx-py"
    wheel = venv.build_wheel(REPO, options.out / "wheel", options.cache)
    for arch in options.arch or ["amd64", "arm64"]:
        for image in options.image or ["agent", "control"]:
            counts = build_root(options, image, arch, wheel)
            print(json.dumps({"root": f"{image}-{arch}", **counts}), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (debian.AptError, RuntimeError, subprocess.SubprocessError) as error:
        sys.exit(f"release: {error}")
