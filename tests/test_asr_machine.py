"""Machine independence of transcripts: CTranslate2's CPU code path (version, ISA, GEMM backends)
is read from its own log, named in every transcript's key and in the manifest, a report reads the
transcripts of the recorded code path, and cache keys hash decoded samples, not file headers.

No Whisper runs here: CTranslate2 is asked only what it selects (an empty model folder), and the
transcripts come from ``TextASRStandIn`` (tests/standins/judge.py).
"""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf
from standins.judge import copy_of

from stylebench.audio import load_audio, samples_sha256, sha256_file
from stylebench.commands.runs import report_only, rescore
from stylebench.metrics.asr import isa
from stylebench.stages import transcribe

LOG = """\
[2026-12-02 05:21:01.334] [ctranslate2] [thread 9477] [info] CPU: AuthenticAMD (SSE4.1=true, AVX=true, AVX2=true, AVX512=true)
[2026-12-02 05:21:01.334] [ctranslate2] [thread 9477] [info]  - Selected ISA: AVX2
[2026-12-02 05:21:01.334] [ctranslate2] [thread 9477] [info]  - Use Intel MKL: false
[2026-12-02 05:21:01.334] [ctranslate2] [thread 9477] [info]  - SGEMM backend: DNNL (packed: false)
[2026-12-02 05:21:01.334] [ctranslate2] [thread 9477] [info]  - GEMM_S16 backend: none (packed: false)
[2026-12-02 05:21:01.334] [ctranslate2] [thread 9477] [info]  - GEMM_S8 backend: DNNL (packed: false, u8s8 preferred: true)
"""  # noqa: E501


def _cpu(name: str) -> isa.Ct2Cpu:
    return isa.Ct2Cpu("4.8.5", name, "AuthenticAMD AVX2=1", "DNNL/DNNL", "", "log")


def test_log_is_parsed_and_the_rule_matches_ctranslate2_dispatch():
    assert isa.parse_log(LOG) == {
        "cpu": "AuthenticAMD SSE4.1=1 AVX=1 AVX2=1 AVX512=1",
        "isa": "AVX2",
        "mkl": "false",
        "sgemm": "DNNL",
        "gemm_s8": "DNNL",
    }
    every = {"AVX": True, "AVX2": True, "AVX512": True}
    assert isa.dispatch_rule("", "x86_64", every) == "AVX2"  # AVX512 only when forced
    assert isa.dispatch_rule("", "x86_64", {"AVX": True}) == "AVX"
    assert isa.dispatch_rule("", "x86_64", {}) == "GENERIC"
    assert isa.dispatch_rule("", "aarch64", {}) == "NEON"
    assert isa.dispatch_rule("GENERIC", "x86_64", every) == "GENERIC"


def test_ct2_cpu_reads_the_log_per_environment_and_falls_back_to_the_rule(monkeypatch):
    logs = {"AVX512": LOG.replace("Selected ISA: AVX2", "Selected ISA: AVX512"), "": LOG}
    monkeypatch.setattr(isa, "_version", lambda: "4.8.5")
    monkeypatch.setattr(
        isa, "_probe_log", lambda: logs[isa.os.environ.get("CT2_FORCE_CPU_ISA", "")]
    )
    isa._ct2_cpu.cache_clear()
    monkeypatch.delenv("CT2_FORCE_CPU_ISA", raising=False)
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    assert isa.ct2_cpu() == isa.Ct2Cpu(
        "4.8.5", "AVX2", "AuthenticAMD SSE4.1=1 AVX=1 AVX2=1 AVX512=1", "DNNL/DNNL", "", "log"
    )
    monkeypatch.setenv("CT2_FORCE_CPU_ISA", "AVX512")
    assert isa.ct2_cpu().isa == "AVX512"
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")  # not in the log: recorded as set
    assert isa.ct2_cpu().key()["env"] == "ONEDNN_MAX_CPU_ISA=AVX2"
    monkeypatch.setattr(isa, "_probe_log", lambda: "")
    monkeypatch.setenv("CT2_FORCE_CPU_ISA", "GENERIC")
    got = isa.ct2_cpu()
    assert (got.isa, got.source) == ("GENERIC", "rule") and "source" not in got.key()
    isa._ct2_cpu.cache_clear()


@pytest.mark.skipif(importlib.util.find_spec("ctranslate2") is None, reason="needs ctranslate2")
def test_the_real_ctranslate2_reports_what_is_forced(monkeypatch):
    isa._ct2_cpu.cache_clear()
    monkeypatch.setenv("CT2_FORCE_CPU_ISA", "GENERIC")
    got = isa.ct2_cpu()
    assert (got.isa, got.source) == ("GENERIC", "log") and got.ctranslate2 and got.gemm
    monkeypatch.delenv("CT2_FORCE_CPU_ISA")
    assert isa.ct2_cpu().isa in isa.ISAS
    isa._ct2_cpu.cache_clear()


def test_the_transcript_key_names_the_cpu_code_path(monkeypatch):
    asr, sha = ("faster-whisper", "base"), "ab" * 32
    monkeypatch.setattr(isa, "ct2_cpu", lambda: _cpu("AVX2"))
    avx2 = transcribe.asr_machine(*asr[:1])
    assert avx2 == {
        "ctranslate2": "4.8.5",
        "isa": "AVX2",
        "cpu": "AuthenticAMD AVX2=1",
        "gemm": "DNNL/DNNL",
        "env": "",
    }
    assert transcribe.asr_machine("faster-whisper", "cuda") == {"ctranslate2": "4.8.5"}
    assert transcribe.asr_machine("openai-whisper") == {}
    monkeypatch.setattr(isa, "ct2_cpu", lambda: _cpu("GENERIC"))
    generic = transcribe.asr_machine("faster-whisper")
    fps = {transcribe.transcript_fp(asr, sha, machine=m) for m in (avx2, generic, None)}
    assert len(fps) == 3


def test_a_job_refuses_an_asr_on_another_code_path(monkeypatch):
    monkeypatch.setattr(isa, "ct2_cpu", lambda: _cpu("AVX512"))
    job = transcribe.TranscribeJob((), machine=_cpu("AVX2").key())
    with pytest.raises(RuntimeError, match="isa: 'AVX2' here 'AVX512'"):
        list(job.run(SimpleNamespace(backend="faster-whisper", device="cpu")))
    list(
        transcribe.TranscribeJob((), machine=_cpu("AVX512").key()).run(
            SimpleNamespace(backend="faster-whisper", device="cpu")
        )
    )


def test_run_records_the_code_path_report_reads_it_rescore_redoes_it(
    tmp_path, standins, monkeypatch, reference_run
):
    first, store = reference_run[0], copy_of(reference_run[0], tmp_path)
    made_on = store.read_manifest()["environment"]["asr_machine"]  # this machine's, really probed
    assert made_on == transcribe.asr_machine("faster-whisper") and made_on["isa"] in isa.ISAS
    monkeypatch.setattr(isa, "ct2_cpu", lambda: _cpu("GENERIC-elsewhere"))  # the folder moved

    def boom(*a, **k):
        raise AssertionError("report transcribed")

    with monkeypatch.context() as mp:
        mp.setattr(transcribe, "make_asr", boom)
        again = report_only(store.root)
    assert again.report["cells"] == first.report["cells"] != []  # the recorded ISA's transcripts
    redone = rescore(store.root, {}, progress=False)
    assert redone.counts["transcribe"]["ok"] == first.counts["transcribe"]["ok"] > 0  # not reused
    assert redone.store.read_manifest()["environment"]["asr_machine"]["isa"] == "GENERIC-elsewhere"


def test_samples_key_ignores_headers(tmp_path):
    """libsndfile writes a timestamp (PEAK chunk) into float WAVs: same samples, other bytes."""
    x = (0.1 * np.sin(np.arange(16000) / 7.0)).astype(np.float32)
    a, b, c = tmp_path / "a.wav", tmp_path / "b.wav", tmp_path / "c.flac"
    sf.write(str(a), x, 16000, subtype="FLOAT")
    raw = bytearray(a.read_bytes())
    at = raw.index(b"PEAK") + 12  # chunk id, size, version, then the write time in seconds
    raw[at : at + 4] = (int.from_bytes(raw[at : at + 4], "little") + 86400).to_bytes(4, "little")
    b.write_bytes(bytes(raw))  # the same file written a day later
    sf.write(str(c), np.round(x * 32767) / 32767, 16000, subtype="PCM_16")
    assert sha256_file(a) != sha256_file(b)
    keys = [samples_sha256(*load_audio(p)) for p in (a, b)]
    assert keys[0] == keys[1] == samples_sha256(x, 16000)
    assert samples_sha256(x, 16000) != samples_sha256(x, 22050)
    assert samples_sha256(x, 16000) != samples_sha256(x * 0.5, 16000)
    assert samples_sha256(*load_audio(c)) != keys[0]  # 16-bit rounding is other samples


def _run(label: str, machine: dict | None, asr: str = "faster-whisper") -> SimpleNamespace:
    env = {"asr_machine": machine} if machine is not None else {}
    return SimpleNamespace(
        label=label, settings={"asr": {"asr": asr}}, manifest={"environment": env}
    )


def test_compare_warns_when_runs_were_transcribed_on_other_code_paths():
    from stylebench.compare.load import asr_cpu_label, asr_machine_warnings

    avx2, generic = _cpu("AVX2").key(), _cpu("GENERIC").key()
    assert asr_machine_warnings([_run("a", avx2), _run("b", dict(avx2))]) == []
    (line,) = asr_machine_warnings([_run("a", avx2), _run("b", generic)])
    assert line.startswith("warning: ") and "isa: a=AVX2, b=GENERIC" in line
    assert "ctranslate2" not in line.split("(")[1].split(")")[0]
    newer = {**avx2, "ctranslate2": "4.9.0"}
    assert (
        "ctranslate2: a=4.8.5, b=4.9.0"
        in asr_machine_warnings([_run("a", avx2), _run("b", newer)])[0]
    )
    assert "b=<unrecorded>" in asr_machine_warnings([_run("a", avx2), _run("b", None)])[0]
    assert asr_machine_warnings([_run("a", avx2), _run("b", None, asr="none")]) == []
    assert asr_cpu_label(_run("a", avx2).manifest) == "ctranslate2 4.8.5 AVX2 DNNL/DNNL"
    assert asr_cpu_label({}) == "unrecorded"


def test_benchmark_transcripts_are_cached_by_samples_and_code_path(tmp_path, monkeypatch):
    """The benchmarks' transcript cache (benchmarks/asr_cache.py, used by real_speech.py and
    real_replies.py): a copy written again (other header bytes) is a cache hit; the same
    samples under another ISA are transcribed again."""
    from pathlib import Path

    from stylebench.metrics.asr.transcript import Transcript

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import asr_cache
    import real_speech

    calls = []

    class CountingASR:  # stand-in for Whisper: counts its calls
        def transcribe(self, wave, sr, lang):
            calls.append(1)
            return Transcript("one two", lang, (), "faster-whisper", "base", ())

    monkeypatch.setitem(asr_cache._ASR, "base", CountingASR())
    monkeypatch.setattr(isa, "ct2_cpu", lambda: _cpu("AVX2"))
    x = (0.1 * np.sin(np.arange(16000) / 7.0)).astype(np.float32)
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    sf.write(str(a), x, 16000, subtype="FLOAT")
    raw = bytearray(a.read_bytes())
    raw[raw.index(b"PEAK") + 12] ^= 0xFF  # the PEAK chunk's write time
    b.write_bytes(bytes(raw))
    for p in (a, b):
        assert real_speech.transcript(p, *load_audio(p), "en", tmp_path / "cache").text == "one two"
    assert len(calls) == 1
    monkeypatch.setattr(isa, "ct2_cpu", lambda: _cpu("GENERIC"))
    real_speech.transcript(a, *load_audio(a), "en", tmp_path / "cache")
    assert len(calls) == 2
