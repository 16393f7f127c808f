"""The interpreter brupop's replicas run under in the benches: a venv holding brupop's runtime
dependencies only, as the control image does, at the versions of the development venv.

The development venv also holds the simulator's and the tests' packages, and some runtime
imports load them when they are there: structlog loads rich (and pygments) for its tracebacks,
and the kubernetes package's dynamic client loads kubernetes_validate (and jsonschema). An
apiserver's imports take 5.5 MiB more there than the image's packages give it.

The venv is made once under `.tools/` and made again when the runtime pins or the development
venv's versions change. brupop itself comes from the source tree (a `.pth` file), so the
processes run the code being measured."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
from pathlib import Path

from rig import progress

REPO = Path(__file__).resolve().parents[2]
VENVS = REPO / ".tools" / "bench-runtime"
INSTALL_SECONDS = 900
OPTIMIZE = 2  # PYTHONOPTIMIZE of the replicas, as the chart runs them


def runtime_python() -> Path:
    """The runtime venv's interpreter, made first if missing or out of date."""
    requirements = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    constraints = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    key = hashlib.sha256("\n".join([*requirements, constraints]).encode()).hexdigest()[:16]
    venv = VENVS / key
    python = venv / "bin" / "python"
    if (venv / "complete").exists():
        return python
    progress(f"making the runtime venv {venv.relative_to(REPO)} (once)")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
    (venv / "requirements.txt").write_text("\n".join(requirements) + "\n")
    (venv / "constraints.txt").write_text(constraints)
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    pip += ["-r", str(venv / "requirements.txt"), "-c", str(venv / "constraints.txt")]
    subprocess.run(pip, check=True, timeout=INSTALL_SECONDS)
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "brupop-source.pth").write_text(str(REPO / "src") + "\n")
    # Bytecode at the replicas' level, as the image ships it (without it each start compiles
    # every module again, and the compiler's memory stays in the process).
    compile_all = [str(python), "-m", "compileall", "-q", "-o", "0", "-o", str(OPTIMIZE)]
    subprocess.run([*compile_all, site, str(REPO / "src")], check=True, timeout=INSTALL_SECONDS)
    (venv / "complete").write_text(key + "\n")
    return python
