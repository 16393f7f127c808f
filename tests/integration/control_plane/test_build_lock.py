"""Two `scripts/control-plane build`s into one cache at once: one builds, the other waits for
it (saying so once) and then finds the binaries; neither prints a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.integration.control_plane.fake_go import cache_missing_only_etcd, install_fake_go
from tests.support.polling import wait_until

ROOT = Path(__file__).resolve().parents[3]


def test_a_second_build_into_the_same_cache_waits_for_the_first_and_then_builds_nothing(
    tmp_path: Path,
) -> None:
    fake = install_fake_go(tmp_path / "go")
    cache = cache_missing_only_etcd(tmp_path / "cache")
    (fake.state / "hold").touch()  # the first build's `go get` waits until the second one runs
    environment = fake.environment(cache.root)
    outputs = [tmp_path / "first.out", tmp_path / "second.out"]

    def start(output: Path) -> subprocess.Popen[bytes]:
        with output.open("w") as out:
            return subprocess.Popen(
                [str(ROOT / "scripts" / "control-plane"), "build"],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=environment,
            )

    first = start(outputs[0])
    try:
        wait_until(lambda: fake.calls("get") == 1, "the first build's go get", seconds=60)
        second = start(outputs[1])
        try:
            wait_until(
                lambda: "waiting" in outputs[1].read_text(), "the second build waits", seconds=60
            )
            assert fake.calls("get") == 1
            (fake.state / "hold").unlink()
            assert first.wait(timeout=60) == 0
            assert second.wait(timeout=60) == 0
        finally:
            second.kill()
    finally:
        first.kill()

    built, waited = (output.read_text() for output in outputs)
    assert (fake.calls("get"), fake.calls("build")) == (1, 1)
    assert cache.missing() == []
    assert "expect about" in built and "etcd v3.6.16: built" in built
    assert waited.count("waiting for it to finish") == 1
    assert "expect about" not in waited and "etcd: already in the cache, skipped" in waited
    assert "Traceback" not in built + waited
