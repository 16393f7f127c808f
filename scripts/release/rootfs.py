"""What a root needs besides its packages' files: the accounts, the CA bundle that
update-ca-certificates would have made, and bytecode for the modules the processes load."""

from __future__ import annotations

import json
import py_compile
import subprocess
from pathlib import Path

UID = 10001
PASSWD = f"root:x:0:0:root:/root:/sbin/nologin\nbrupop:x:{UID}:{UID}::/nonexistent:/sbin/nologin\n"
GROUP = f"root:x:0:\nbrupop:x:{UID}:\n"
CA_BUNDLE = "etc/ssl/certs/ca-certificates.crt"

# What each image's processes import at start, as `brupop <command>` reaches them, and what they
# import later, at run time: the IDNA codec a host name that is not ASCII is encoded with (the
# agent's ASCII names skip it; compiling its stringprep tables at each start would cost about
# 100 ms of CPU), and what the error paths load: `traceback` for a logged traceback, `difflib`
# for a mistyped command's suggestion, `importlib.util` for a missing extra's check.
# tests/deploy/test_image_bytecode.py runs the agent to its first request and checks that
# everything it imported on the way is in this list's closure.
RUN_TIME = ("encodings.idna", "traceback", "difflib", "importlib.util")
ENTRYPOINTS = {
    "agent": ("brupop.cli.main", "brupop.entrypoints.agent.main",
              "brupop.adapters.apiserver_client", "brupop.hostsim.__main__", *RUN_TIME),
    "control": ("brupop.cli.main", "brupop.entrypoints.controller.main",
                "brupop.entrypoints.apiserver.main", "uvicorn.loops.asyncio",
                "uvicorn.protocols.http.httptools_impl", "uvicorn.lifespan.on",
                # The cluster each process builds at start, with the Kubernetes client, the
                # token libraries the apiserver loads for its first agent, and the conversion
                # worker it starts for the first large review.
                "brupop.adapters.kubernetes.cluster", "jwt", "jwt.algorithms",
                "brupop.adapters.apiserver_http.conversion.worker", *RUN_TIME),
}  # fmt: skip
# The optimization level each image's bytecode is compiled for: the chart runs the controller
# and the apiserver with PYTHONOPTIMIZE=2 (docstrings and asserts left out: the Kubernetes
# client's docstrings alone are 15 MiB resident), so only `.opt-2.pyc` files serve them.
OPTIMIZATION = {"agent": 0, "control": 2}

# Run by the root's own Python: every module file loaded by importing the entrypoints.
_PROBE = """\
import importlib, json, sys
for name in sys.argv[2:]:
    importlib.import_module(name)
files = (getattr(m, "__file__", None) for m in list(sys.modules.values()))
print(json.dumps(sorted({f for f in files if f and f.endswith(".py")})))
"""


def write_accounts(root: Path) -> None:
    """/etc/passwd and /etc/group with root and brupop (uid and gid 10001)."""
    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc" / "passwd").write_text(PASSWD, encoding="utf-8")
    (root / "etc" / "group").write_text(GROUP, encoding="utf-8")


def write_ca_bundle(root: Path) -> int:
    """The bundle of every CA certificate the package ships (what its maintainer script
    builds with every certificate enabled); returns how many it holds."""
    certificates = sorted((root / "usr" / "share" / "ca-certificates").rglob("*.crt"))
    bundle = root / CA_BUNDLE
    bundle.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_text(
        "".join(c.read_text(encoding="ascii").rstrip("\n") + "\n" for c in certificates),
        encoding="ascii",
    )
    return len(certificates)


def loaded_modules(root: Path, image: str, launcher: list[str]) -> list[Path]:
    """The .py files of `root` that its Python loads for `image`'s entrypoints, found by
    running that Python (through `launcher`, e.g. qemu with -L root, for a foreign one)."""
    python = root / "usr" / "bin" / "python3.11"
    site = next((root / "opt" / "brupop" / "lib").glob("python3.11/site-packages"))
    code = f"import sys; sys.path.insert(0, {str(site)!r})\n" + _PROBE
    result = subprocess.run(
        [*launcher, str(python), "-I", "-S", "-B", "-c", code, str(root), *ENTRYPOINTS[image]],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"the {image} root's Python cannot import its entrypoints: "
                           f"{result.stderr.strip()[-2000:]}")  # fmt: skip
    files = [Path(name) for name in json.loads(result.stdout.splitlines()[-1])]
    return [f for f in files if f.is_relative_to(root)]


def compile_modules(root: Path, files: list[Path], optimization: int = 0) -> None:
    """Bytecode beside each file for `optimization` (0, or 2 for `.opt-2.pyc`), naming its
    path in the image, used without checking the source (the image never changes): no
    compiling on a node at 10m of CPU."""
    for source in files:
        py_compile.compile(
            str(source),
            dfile="/" + str(source.relative_to(root)),
            doraise=True,
            optimize=optimization,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
