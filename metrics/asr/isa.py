"""Which CPU code path CTranslate2 decodes with: its version, the ISA it dispatches to, the GEMM
backends; part of a CPU transcript's key and of the run manifest.

The same audio, model and settings do not give the same transcript on every CPU: CTranslate2
picks its kernels at run time (``CT2_FORCE_CPU_ISA`` = GENERIC, AVX, AVX2 or AVX512 on x86,
otherwise AVX2 when the CPU has it, else AVX, else GENERIC; NEON on arm64), uses Intel MKL for its
matrix products on Intel CPUs and oneDNN elsewhere (``CT2_USE_MKL``), and oneDNN dispatches again
by the CPU's features. The last bits of the activations then differ, and a greedy step can flip a
token (docs/metrics.md, "Machine independence", measured). So a transcript names the machine it
was decoded on, and one made under another ISA is not silently reused.

CTranslate2 logs exactly what it selected the first time a model is loaded (``CT2_VERBOSE=1``),
before it reads any file; :func:`ct2_cpu` asks it once per process and environment, in a
subprocess that "loads" an empty folder (about 0.2 s), and falls back to reproducing its dispatch
rule (``src/cpu/cpu_isa.cc``) when that fails.
"""

from __future__ import annotations

import functools
import os
import platform
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

#: environment variables that change CTranslate2's CPU code path; the first two show in its log
ENV_VARS = ("CT2_FORCE_CPU_ISA", "CT2_USE_MKL", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
#: those that do not (oneDNN's own dispatch), so they are recorded as set
UNLOGGED_ENV = ENV_VARS[2:]
ISAS = ("GENERIC", "AVX", "AVX2", "AVX512", "NEON")

_PROBE = (
    "import ctranslate2, sys\n"
    "try:\n"
    "    ctranslate2.Encoder(sys.argv[1], device='cpu')\n"
    "except Exception:\n"
    "    pass\n"
)
_CPU_LINE = re.compile(r"CPU: (\S+) \(([^)]*)\)")
_FIELDS = {
    "isa": re.compile(r"Selected ISA: (\w+)"),
    "mkl": re.compile(r"Use Intel MKL: (\w+)"),
    "sgemm": re.compile(r"SGEMM backend: (\w+)"),
    "gemm_s8": re.compile(r"GEMM_S8 backend: (\w+)"),
}


@dataclass(frozen=True)
class Ct2Cpu:
    """CTranslate2's CPU configuration in this process's environment.

    Attributes:
        ctranslate2: the installed version ("" when it is not installed).
        isa: the ISA its kernels dispatch to (GENERIC, AVX, AVX2, AVX512, NEON).
        cpu: vendor and the features CTranslate2 tests, e.g. ``"AuthenticAMD AVX=1 AVX2=1 ..."``
            (oneDNN dispatches on these too, whatever ``isa`` says).
        gemm: the float32 and int8 matrix-product backends, e.g. ``"DNNL/DNNL"``.
        env: the set variables of :data:`UNLOGGED_ENV` (oneDNN's ISA cap), e.g. ``""``.
        source: ``"log"`` (CTranslate2 said so) or ``"rule"`` (reproduced, the log was not readable).
    """

    ctranslate2: str
    isa: str
    cpu: str
    gemm: str
    env: str
    source: str

    def key(self) -> dict[str, str]:
        """What a transcript's key holds: everything but where the answer came from."""
        return {k: v for k, v in asdict(self).items() if k != "source"}


def parse_log(text: str) -> dict[str, str]:
    """The fields of CTranslate2's system-configuration log lines (``CT2_VERBOSE=1``)."""
    out: dict[str, str] = {}
    m = _CPU_LINE.search(text)
    if m:
        flags = [
            f.strip().replace("=true", "=1").replace("=false", "=0") for f in m.group(2).split(",")
        ]
        out["cpu"] = " ".join([m.group(1), *flags])
    for name, rx in _FIELDS.items():
        if mm := rx.search(text):
            out[name] = mm.group(1)
    return out


def _x86_features() -> dict[str, bool]:
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    avx512 = {"avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"} <= flags
    return {"AVX": "avx" in flags, "AVX2": "avx2" in flags, "AVX512": avx512}


def dispatch_rule(forced: str, machine: str, features: dict[str, bool]) -> str:
    """CTranslate2's ISA choice (``src/cpu/cpu_isa.cc``): the forced value when set (CTranslate2
    refuses one the CPU lacks), else the best of AVX2 and AVX on x86, NEON on arm64, else GENERIC.
    AVX512 is used only when forced."""
    if forced:
        return forced
    if machine in ("x86_64", "amd64", "i386", "i686"):
        return next((isa for isa in ("AVX2", "AVX") if features.get(isa)), "GENERIC")
    if machine in ("aarch64", "arm64"):
        return "NEON"
    return "GENERIC"


def _version() -> str:
    try:
        return metadata.version("ctranslate2")
    except metadata.PackageNotFoundError:
        return ""


def _probe_log() -> str:
    env = dict(os.environ, CT2_VERBOSE="1")
    with tempfile.TemporaryDirectory(prefix="stylebench-ct2-") as empty:
        res = subprocess.run(
            [sys.executable, "-c", _PROBE, empty],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
    return res.stdout + res.stderr


@functools.cache
def _ct2_cpu(env: tuple[tuple[str, str], ...]) -> Ct2Cpu:
    version = _version()
    setting = " ".join(f"{k}={v}" for k, v in env if k in UNLOGGED_ENV)
    if not version:
        return Ct2Cpu("", "", "", "", setting, "rule")
    try:
        logged = parse_log(_probe_log())
    except (OSError, subprocess.SubprocessError):
        logged = {}
    if {"isa", "cpu", "sgemm", "gemm_s8"} <= set(logged):
        return Ct2Cpu(
            version,
            logged["isa"],
            logged["cpu"],
            f"{logged['sgemm']}/{logged['gemm_s8']}",
            setting,
            "log",
        )
    feats = _x86_features()
    machine = platform.machine().lower()
    isa = dispatch_rule(dict(env).get("CT2_FORCE_CPU_ISA", ""), machine, feats)
    cpu = " ".join([machine, *(f"{k}={int(v)}" for k, v in feats.items())])
    return Ct2Cpu(version, isa, cpu, "?", setting, "rule")


def ct2_cpu() -> Ct2Cpu:
    """CTranslate2's CPU configuration under the current environment (cached per environment).

    Example: on an AMD EPYC with AVX-512 and no variables set, ``isa="AVX2"``,
    ``gemm="DNNL/DNNL"``; with ``CT2_FORCE_CPU_ISA=GENERIC``, ``isa="GENERIC"``.
    """
    env = tuple((k, os.environ[k]) for k in ENV_VARS if os.environ.get(k))
    return _ct2_cpu(env)


def describe() -> dict[str, Any]:
    """The manifest entry: :class:`Ct2Cpu` as a dict."""
    return asdict(ct2_cpu())
