"""What a root needs besides its packages' files: the accounts, the CA bundle that
update-ca-certificates would have made, and bytecode for the modules the processes load."""

from __future__ import annotations

import contextlib
import json
import py_compile
import subprocess
import sys
import tempfile
from pathlib import Path

UID = 10001
PASSWD = f"root:x:0:0:root:/root:/sbin/nologin\nbrupop:x:{UID}:{UID}::/nonexistent:/sbin/nologin\n"
GROUP = f"root:x:0:\nbrupop:x:{UID}:\n"
CA_BUNDLE = "etc/ssl/certs/ca-certificates.crt"
# How long the probe of what an image loads may take; under qemu on a loaded machine it is the
# slowest step of a root (about 50 s for the control root with four busy loops on 2 cores).
PROBE_SECONDS = 300

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
    with tempfile.TemporaryDirectory(prefix="brupop-probe-") as cache:
        _compile_natively(root, site, cache)
        command = [*launcher, str(python), "-I", "-S", "-B", "-X", f"pycache_prefix={cache}",
                   "-c", code, str(root), *ENTRYPOINTS[image]]  # fmt: skip
        try:
            result = subprocess.run(
                command, capture_output=True, text=True, timeout=PROBE_SECONDS, check=False
            )
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the {image} root's Python did not import its entrypoints "
                               f"in {PROBE_SECONDS} s") from None  # fmt: skip
    if result.returncode != 0:
        raise RuntimeError(f"the {image} root's Python cannot import its entrypoints: "
                           f"{result.stderr.strip()[-2000:]}")  # fmt: skip
    files = [Path(name) for name in json.loads(result.stdout.splitlines()[-1])]
    return [f for f in files if f.is_relative_to(root)]


def _compile_natively(root: Path, site: Path, cache: str) -> None:
    """Bytecode for the root's standard library and packages in `cache`, made by this
    machine's Python: the probe then reads bytecode instead of compiling every module itself,
    which under qemu is most of its time (19 s to 4 s for the control root). A Python of
    another minor version writes bytecode the probe does not use, so it only costs speed."""
    command = [sys.executable, "-X", f"pycache_prefix={cache}", "-m", "compileall", "-q",
               "-j", "0", str(root / "usr" / "lib" / "python3.11"), str(site)]  # fmt: skip
    # Some files of the standard library's tests do not compile; nothing loads them. Out of
    # time, the probe compiles what it loads itself, as it would without this.
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(command, capture_output=True, timeout=PROBE_SECONDS, check=False)


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
