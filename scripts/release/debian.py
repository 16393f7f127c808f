"""Debian packages of an image root: resolved with apt's dependency data, fetched with
`apt-get download` and unpacked with `dpkg-deb -x` (no maintainer scripts run).

apt runs over a private state directory per architecture (its own lists, archive cache and an
empty dpkg status), so the host's apt and dpkg are never changed and no package counts as
installed. The sources are the host's Debian mirror and suites.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

# What each image's Debian part starts from; the rest is their dependency closure.
# base-files gives /etc/os-release (scanners read it), /tmp and the top directories.
ROOTS = ("base-files", "python3.11-minimal", "libpython3.11-stdlib", "ca-certificates")

# Dependencies left out, with why: package tooling (nothing installs or configures packages in
# the image) and libraries only for stdlib modules brupop never imports. `scripts/test-image`
# imports every process's entrypoint in the image, so a needed library missing here shows.
LEFT_OUT = {
    "debconf": "configures packages at install time",
    "cdebconf": "configures packages at install time",
    "dpkg": "the package manager",
    "perl-base": "needed by package tooling only",
    "tar": "needed by package tooling only",
    "gawk": "base-files' maintainer scripts use awk",
    "install-info": "maintains the info directory at install time",
    "openssl": "the command-line tool (update-ca-certificates); libssl3 stays",
    "readline-common": "interactive line editing (the readline module)",
    "libreadline8": "interactive line editing (the readline module)",
    "libncursesw6": "the curses module",
    "libtinfo6": "terminal data for curses and readline",
    "libsqlite3-0": "the sqlite3 module",
    "libdb5.3": "the dbm.ndbm module",
    "libtirpc3": "the nis module (and its Kerberos libraries)",
    "libnsl2": "the nis module",
    "mime-support": "media-types is the alternative taken",
    "mailcap": "media-types is the alternative taken",
}

# Extra packages per image: the control image's wheels (google-re2) link libstdc++.
EXTRA = {"agent": (), "control": ("libstdc++6",)}


@dataclass(frozen=True)
class DebianPackage:
    """One unpacked .deb, as the SBOM and scanners name it."""

    name: str
    version: str
    architecture: str
    source: str

    @property
    def purl(self) -> str:
        return (
            f"pkg:deb/debian/{self.name}@{self.version}?arch={self.architecture}&distro=debian-12"
        )


class AptError(RuntimeError):
    """apt could not resolve or fetch the image's packages."""


@dataclass(frozen=True)
class PrivateApt:
    """apt for one architecture over a state directory of its own under `cache`."""

    cache: Path
    architecture: str
    suite: str = "bookworm"

    @property
    def home(self) -> Path:
        return self.cache / "apt" / self.architecture

    def options(self) -> list[str]:
        home = self.home
        settings = {
            "APT::Architecture": self.architecture,
            "APT::Architectures": self.architecture,
            "Dir::State": str(home / "state"),
            "Dir::State::status": str(home / "state" / "status"),
            "Dir::Cache": str(home / "cache"),
            "Dir::Etc::SourceList": str(home / "sources.list"),
            "Dir::Etc::SourceParts": str(home / "sources.list.d"),
            "Dir::Etc::Preferences": str(home / "preferences"),
            "Dir::Etc::PreferencesParts": str(home / "preferences.d"),
            "APT::Get::List-Cleanup": "false",
        }
        return [arg for key, value in settings.items() for arg in ("-o", f"{key}={value}")]

    def run(self, *args: str, cwd: Path | None = None, timeout: float = 600) -> str:
        command = [args[0], *self.options(), *args[1:]]
        result = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
        if result.returncode != 0:
            raise AptError(f"{' '.join(args)} failed: {result.stderr.strip()[-2000:]}")
        return result.stdout

    def update(self, mirror: str, security_mirror: str, max_age_seconds: float) -> None:
        """Fetch the package lists, unless lists younger than `max_age_seconds` are there."""
        home = self.home
        stamp = home / "state" / "updated"
        if stamp.exists() and time.time() - stamp.stat().st_mtime < max_age_seconds:
            return
        for directory in ("state/lists/partial", "cache/archives/partial", "sources.list.d",
                          "preferences.d"):  # fmt: skip
            (home / directory).mkdir(parents=True, exist_ok=True)
        (home / "state" / "status").touch()
        (home / "preferences").touch()
        keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
        (home / "sources.list").write_text(
            f"deb [signed-by={keyring}] {mirror} {self.suite} main\n"
            f"deb [signed-by={keyring}] {mirror} {self.suite}-updates main\n"
            f"deb [signed-by={keyring}] {security_mirror} {self.suite}-security main\n",
            encoding="utf-8",
        )
        self.run("apt-get", "update", "-q")
        stamp.touch()

    def closure(self, roots: tuple[str, ...]) -> list[str]:
        """The roots and their Depends and Pre-Depends, first alternatives, minus LEFT_OUT."""
        wanted: list[str] = []
        pending = [name for name in roots if name not in LEFT_OUT]
        while pending:
            wanted += pending
            found = _dependencies(self.run("apt-cache", "depends", *_DEPENDS_FLAGS, *pending))
            pending = sorted({n for n in found if n not in LEFT_OUT and n not in wanted})
        return sorted(wanted)

    def describe(self, names: list[str]) -> list[DebianPackage]:
        """Name, candidate version, architecture and source of each package."""
        text = self.run("apt-cache", "show", "--no-all-versions", *names)
        packages = []
        for stanza in text.strip().split("\n\n"):
            fields = _fields(stanza)
            source = fields.get("Source", fields["Package"]).split(" ")[0]
            packages.append(
                DebianPackage(fields["Package"], fields["Version"], fields["Architecture"], source)
            )
        return packages

    def download(self, packages: list[DebianPackage]) -> list[Path]:
        """The .deb of each package, from the cache or fetched into it."""
        archive = self.cache / "debs" / self.architecture
        archive.mkdir(parents=True, exist_ok=True)
        files = {p: archive / _deb_name(p) for p in packages}
        missing = [p for p, path in files.items() if not path.exists()]
        if missing:
            wanted = [f"{p.name}:{p.architecture}={p.version}" for p in missing]
            self.run("apt-get", "download", "-q", *wanted, cwd=archive)
        return list(files.values())


_DEPENDS_FLAGS = ("--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
                  "--no-replaces", "--no-enhances")  # fmt: skip


def _deb_name(package: DebianPackage) -> str:
    version = package.version.replace(":", "%3a")
    return f"{package.name}_{version}_{package.architecture}.deb"


def _fields(stanza: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in stanza.splitlines():
        if line and not line[0].isspace() and ":" in line:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def _dependencies(text: str) -> set[str]:
    """The first real alternative of every dependency group in `apt-cache depends` output."""
    found: set[str] = set()
    lines = text.splitlines()
    index, in_group = 0, False
    while index < len(lines):
        line = lines[index]
        index += 1
        kind, _, target = line.strip().partition(": ")
        if not line.startswith(" ") or kind.lstrip("|") not in ("Depends", "PreDepends"):
            in_group = False
            continue
        chosen = target
        if target.startswith("<"):  # virtual: its providers follow, indented further
            providers = []
            while index < len(lines) and lines[index].startswith("    "):
                providers.append(lines[index].strip())
                index += 1
            chosen = providers[0] if providers else ""
        if chosen and not in_group:
            found.add(chosen.split(":")[0])
        in_group = kind.startswith("|")
    return found


def unpack(debs: list[Path], root: Path) -> None:
    """Unpack each .deb's files into `root`, running none of its maintainer scripts."""
    root.mkdir(parents=True, exist_ok=True)
    for deb in debs:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=120)


# Files of unpacked packages that no process of the images uses, left out as distroless images
# leave them out. glibc's charset modules (gconv) serve iconv(3) for charsets other than its
# built-in ones (UTF-8, ASCII, Latin-1, UCS-2/4); Python's codecs are its own code and never
# call iconv. On arm64 they are 19.6 MB (each aligned to 64 KiB pages). scripts/release/check.py
# runs the image's codecs to prove that nothing needed them.
PRUNED = {"usr/lib/*-linux-gnu/gconv": "glibc's iconv charset modules; Python's codecs are its own"}


def prune(root: Path) -> int:
    """Remove PRUNED from `root`; returns the bytes removed."""
    removed = 0
    for pattern in PRUNED:
        for found in root.glob(pattern):
            removed += sum(f.stat().st_size for f in found.rglob("*") if f.is_file())
            shutil.rmtree(found)
    return removed


def record(debs: list[Path], root: Path) -> None:
    """Each package's control stanza in var/lib/dpkg/status.d/, where scanners look for
    the packages of a root that has no dpkg database (as distroless images do)."""
    status = root / "var" / "lib" / "dpkg" / "status.d"
    status.mkdir(parents=True, exist_ok=True)
    for deb in debs:
        control = subprocess.run(
            ["dpkg-deb", "-f", str(deb)], capture_output=True, text=True, check=True, timeout=60
        ).stdout
        name = _fields(control)["Package"]
        (status / name).write_text(control.rstrip("\n") + "\nStatus: install ok installed\n")
