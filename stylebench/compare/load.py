"""Open stored runs for comparison: their per-turn scores, gate, provenance, and what must match.

Runs are read, never changed: the current records of each stage are collected as
``stylebench report`` collects them (nothing is computed, no file is written).
"""

from __future__ import annotations

import functools
import gc
import hashlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stylebench.commands.scored import ScoredRun
from stylebench.config import RunConfig
from stylebench.errors import BadValue
from stylebench.metrics.dims.base import all_dims

#: what two compared runs must share, unless the user allows the difference (--allow-mismatch)
CHECKS = ("dialogues", "thresholds", "asr", "judge", "measure")


@dataclass(frozen=True)
class RunData:
    """One run as a comparison needs it: its scores (computed once, as its report computes
    them) and what is comparative: its label, the settings that must match, its provenance.

    ``scored`` holds the run's scores whole but only the records a comparison reads after
    scoring (:func:`compact`): a paper-size comparison holds 13 runs of 43.2K replies at once.
    ``pending`` counts what a resume of the run would compute (replies not ok, units of later
    stages without a current ok record); 0 for a finished run.
    """

    label: str
    root: Path  # the run folder, resolved
    scored: ScoredRun
    settings: dict[str, dict[str, Any]]  # per CHECKS entry, what must match
    provenance: dict[str, Any]
    pending: int = 0

    @property
    def model(self) -> str:
        return self.scored.cfg.model

    @property
    def manifest(self) -> Mapping[str, Any]:
        return self.scored.manifest


def _settings(manifest: Mapping[str, Any], cfg: RunConfig) -> dict[str, dict[str, Any]]:
    m, sc, jc, ec = cfg.measure, cfg.score, cfg.judge, cfg.emotion
    judge = dict(manifest.get("judge") or {})
    judge.pop("skipped", None)  # the reason wording is not a setting
    return {
        "dialogues": {"checksum": manifest["dialogues"]["checksum"]},
        "thresholds": {
            **{d.threshold_field: getattr(sc, d.threshold_field) for d in all_dims()},
            "probe_delta": ec.probe_delta,
            "mrd_threshold": jc.mrd_threshold,
            "min_quality": sc.min_quality,
        },
        "asr": {"asr": m.asr, "asr_model": m.asr_model},
        "judge": {
            "judge": jc.judge,
            "judge_model": jc.judge_model,
            "judge_input": jc.judge_input,
            "filter_mrd": jc.filter_mrd,
            "describe": judge,
        },
        "measure": {
            "vad": m.vad,
            "pitch_stat": m.pitch_stat,
            "speed_source": m.speed_source,
            "transcript_max_error": m.transcript_max_error,
            "f0_floor": m.f0_floor,
            "f0_ceil": m.f0_ceil,
            "emotion_probe": ec.emotion_probe,
            "probe_model": ec.probe_model,
            "metric_specs": (manifest.get("metrics") or {}).get("specs"),
        },
    }


def _provenance(
    root: Path, manifest: Mapping[str, Any], settings: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    ident = manifest.get("identity") or {}
    env = manifest.get("environment") or {}
    judge = settings["judge"]
    return {
        "run_id": manifest.get("run_id", root.name),
        "run_dir": str(root),
        "model_fingerprint": ident.get("fingerprint"),
        "dialogue_checksum": settings["dialogues"]["checksum"],
        "asr": "none"
        if settings["asr"]["asr"] == "none"
        else f"{settings['asr']['asr']} {settings['asr']['asr_model']}",
        "judge": " ".join(
            str(x)
            for x in (judge["judge"], judge["describe"].get("model") or judge["judge_model"] or "")
            if x
        ),
        "thresholds": settings["thresholds"],
        "asr_cpu": asr_cpu_label(manifest) if settings["asr"]["asr"] != "none" else "none",
        "stylebench_version": env.get("stylebench"),
        "git": env.get("git"),
        "manifest_sha256": hashlib.sha256((root / "manifest.json").read_bytes()).hexdigest(),
    }


#: the fields of a run's ASR CPU code path (manifest ``environment.asr_machine``) that make
#: transcripts of the same audio differ between runs (docs/metrics.md, "Machine independence")
ASR_MACHINE_FIELDS = ("ctranslate2", "isa", "gemm", "env")


def asr_cpu_label(manifest: Mapping[str, Any]) -> str:
    """e.g. ``"ctranslate2 4.8.5 AVX2 DNNL/DNNL"``; ``"unrecorded"`` for an older manifest."""
    m = (manifest.get("environment") or {}).get("asr_machine") or {}
    if not m:
        return "unrecorded"
    return " ".join(
        x
        for x in (
            f"ctranslate2 {m.get('ctranslate2', '?')}",
            m.get("isa"),
            m.get("gemm"),
            m.get("env"),
        )
        if x
    )


def asr_machine_warnings(runs: Sequence[RunData]) -> list[str]:
    """One warning line when the runs' transcripts were made under different CTranslate2
    versions or CPU code paths (ISA, GEMM backends, oneDNN caps), or one run does not record its
    own; empty when they agree or no run has ASR. Not a refusal: the settings are the same, but
    the same audio can be transcribed differently, so speed scores are not quite comparable."""
    asr = [r for r in runs if r.settings["asr"]["asr"] != "none"]
    rows = [(r.label, (r.manifest.get("environment") or {}).get("asr_machine") or {}) for r in asr]
    if len(rows) < 2:
        return []
    differ = [f for f in ASR_MACHINE_FIELDS if len({m.get(f, "<unrecorded>") for _, m in rows}) > 1]
    if not differ:
        return []
    shown = "; ".join(
        f"{f}: " + ", ".join(f"{label}={m.get(f) or '<unrecorded>'}" for label, m in rows)
        for f in differ
    )
    return [
        f"warning: these runs were transcribed on different CPU code paths ({shown}); the same "
        "audio can give other transcripts there (docs/metrics.md, Machine independence), so "
        "speed scores differ partly by the ASR: re-score them on one machine "
        "(`stylebench score RUN`) to compare speed exactly"
    ]


#: open :func:`records_held` blocks; the first says whether it froze the heap (it owns it)
_HELD: list[bool] = []


@contextmanager
def records_held() -> Iterator[None]:
    """While open, each :func:`load_run` ends with a collection and ``gc.freeze()``: the runs
    already read are left out of every later collection. Python's cycle collector otherwise
    walks every record held each time it runs, so reading the tenth run paid for the nine
    before it (at paper size, a third of ``compare``'s time). The records are not cyclic
    garbage, so nothing that would have been freed is kept. On leaving, the frozen objects go
    back to the collector (``gc.unfreeze()``). Inside another block, or where something else
    of the process froze objects first, it changes nothing."""
    owned = not _HELD and gc.get_freeze_count() == 0
    _HELD.append(owned)
    try:
        yield
    finally:
        _HELD.pop()
        if owned:
            gc.unfreeze()


def load_run(run_dir: Path | str, label: str | None = None) -> RunData:
    """Read one run folder's current records and score them (nothing is computed, nothing is
    written into the run): from the copy kept in the cache root when one is current
    (:mod:`.kept`), else from the records, and keep a copy.

    Raises:
        FileNotFoundError: not a run folder. ValueError: its dialogue set changed since.
    """
    from stylebench.commands.runs import open_stored
    from stylebench.compare.kept import kept_or_computed

    run = open_stored(run_dir)
    scored, pending = kept_or_computed(run, functools.partial(computed_scores, run))
    settings = _settings(run.manifest, run.cfg)
    root = Path(run_dir).resolve()
    data = RunData(
        label=label or run.cfg.model,
        root=root,
        scored=scored,
        settings=settings,
        provenance=_provenance(root, run.manifest, settings),
        pending=pending,
    )
    del run, scored
    if _HELD and _HELD[0]:
        gc.collect()
        gc.freeze()
    return data


def computed_scores(run: Any) -> tuple[ScoredRun, int]:
    """The opened run's scores computed from its records, :func:`compact`, and the count a
    resume of it would compute (:attr:`RunData.pending`)."""
    from stylebench.commands.runs import score_stored

    scored = score_stored(run)
    turns = sum(len(s.turn_numbers) for s in run.samples)
    pending = turns - sum(r.status == "ok" for r in scored.replies.values())
    pending += sum(c.get("pending", 0) for c in scored.measured.counts.values())
    return compact(scored), pending


def compact(scored: ScoredRun) -> ScoredRun:
    """``scored`` with only the records a comparison reads once the run is scored, each with
    only the fields it reads: the replies without ``raw`` and the transcripts without their
    words and ``raw`` (a cell's sample page shows each turn's audio, text and transcript), the
    features' DNSMOS scores (the quality table), the loudness records (its table). The scores
    themselves (turn scores, each stage's part: the gate, the probe's scores) are kept whole; the
    records of the other stages are gone (reading one raises ``KeyError``). A paper-size run's
    records took about 1 GB as objects; a comparison holds 13 runs."""
    from dataclasses import replace

    from stylebench.records import FEATURES, RESPONSES, TRANSCRIPTS, RunRecords
    from stylebench.scoring.quality import SCORES
    from stylebench.stages.loudness import LOUDNESS
    from stylebench.stages.outputs import Measured

    recs = scored.records
    quality = tuple(SCORES.values())
    kept = RunRecords(
        {
            RESPONSES.name: {k: _with(r, raw={}) for k, r in recs.of(RESPONSES).items()},
            TRANSCRIPTS.name: {
                k: _with(r, words=[], raw={}) for k, r in recs.of(TRANSCRIPTS).items()
            },
            FEATURES.name: {
                k: _with(r, values={n: r.values[n] for n in quality if n in r.values}, raw={})
                for k, r in recs.of(FEATURES).items()
            },
            LOUDNESS.name: recs.get(LOUDNESS.name, {}),
        }
    )
    measured = Measured(kept, scored.measured.info, scored.measured.counts)
    return replace(scored, measured=measured)


def _with(record: Any, **fields: Any) -> Any:
    """``dataclasses.replace(record, **fields)`` for a stage record (a frozen dataclass with no
    ``__post_init__`` and no slots), without ``replace``'s field introspection and keyword
    call: a comparison of ten paper-size runs replaces 1.3 million. The fields are set one by
    one in their declared order, as the dataclass's ``__init__`` sets them, so the object is
    laid out as one built by ``replace`` (copying the instance ``__dict__`` instead took about
    110 bytes more per record)."""
    cls = type(record)
    if hasattr(cls, "__post_init__") or hasattr(cls, "__slots__"):
        from dataclasses import replace

        return replace(record, **fields)
    new = object.__new__(cls)
    for name in _field_names(cls):
        object.__setattr__(new, name, fields[name] if name in fields else getattr(record, name))
    return new


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    import dataclasses

    return tuple(f.name for f in dataclasses.fields(cls))


def _flat(d: Any, prefix: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        return {prefix: d}
    out: dict[str, Any] = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}.{k}"))
    return out


def differences(runs: Sequence[RunData]) -> dict[str, list[str]]:
    """Per check in :data:`CHECKS`, the settings that differ between runs (label=value each)."""
    out: dict[str, list[str]] = {}
    for check in CHECKS:
        flats = [_flat(r.settings[check], check) for r in runs]
        for key in sorted(set().union(*flats)):
            values = [f.get(key, "<absent>") for f in flats]
            if any(v != values[0] for v in values):
                shown = ", ".join(
                    f"{r.label}={str(v)[:60]}" for r, v in zip(runs, values, strict=True)
                )
                out.setdefault(check, []).append(f"{key} ({shown})")
    return out


def check_compatible(runs: Sequence[RunData], allow: Collection[str] = ()) -> dict[str, list[str]]:
    """Refuse runs that differ in a check not in ``allow``, naming every differing setting.

    Returns:
        The allowed differences (for the comparison's notes).

    Raises:
        ValueError: an unknown check in ``allow``, or runs that differ in a check not allowed.
    """
    unknown = sorted(set(allow) - set(CHECKS))
    if unknown:
        raise BadValue(f"--allow-mismatch takes {', '.join(CHECKS)}; got {unknown}")
    diff = differences(runs)
    refused = {k: v for k, v in diff.items() if k not in allow}
    if refused:
        what = "; ".join(x for v in refused.values() for x in v)
        raise BadValue(
            f"these runs are not comparable: they differ in {what}. Re-score them with the same "
            "settings (`stylebench score RUN --...`), or pass "
            + " ".join(f"--allow-mismatch {k}" for k in refused)
            + " to compare them anyway (the difference is then noted in the comparison)"
        )
    return {k: v for k, v in diff.items() if k in allow}
