"""probe: automatic emotion-recogniser probabilities for every ok reply of an emotion sample.

Records are keyed (sample_id, turn) and fingerprinted by the probe, its model and the reply's
sha256, so a re-run with the same probe skips what is done, a different model writes new records
beside the old ones, and failed turns are retried. Acoustic samples are never probed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stylebench.records import ProbeRecord, Sample
from stylebench.registry import LazyRegistry
from stylebench.stages import fingerprint
from stylebench.store import RunStore

PROBES = LazyRegistry.from_pairs(
    "emotion probe", [("emotion2vec", "stylebench.metrics.emotion_probe:Emotion2VecProbe")]
)
PROBE_VERSION = "1"


def probe_fp(probe: str, model: str) -> str:
    return fingerprint("probe", probe, model, PROBE_VERSION)


def expected_probe_fps(
    store: RunStore, samples: Sequence[Sample], probe: str, model: str
) -> dict[tuple[str, int], str]:
    """The fingerprint every current probe record of an ok emotion reply must carry."""
    replies = store.load("respond")
    pfp = probe_fp(probe, model)
    out = {}
    for s in samples:
        if s.dim != "emotion":
            continue
        for k in (1, 2, 3):
            r = replies.get((s.id, k))
            if r is not None and r.status == "ok":
                out[(s.id, k)] = fingerprint(pfp, r.sha256)
    return out


def run_probe(
    store: RunStore,
    samples: Sequence[Sample],
    probe: str,
    model: str,
    *,
    strict: bool = False,
    progress: bool = True,
    instance: Any = None,
) -> dict[str, int]:
    """Probe every ok emotion reply that has no ok record from this probe and model yet."""
    from tqdm import tqdm

    from stylebench.metrics.emotion_probe import top

    expected = expected_probe_fps(store, samples, probe, model)
    have = store.load("probe", expected)
    todo = [k for k in expected if not (have.get(k) and have[k].status == "ok")]
    counts = {"called": 0, "ok": 0, "error": 0, "skipped": len(expected) - len(todo)}
    if todo and instance is None:
        instance = PROBES.load(probe)(model)
    replies = store.load("respond")
    for key in tqdm(todo, desc="probe", unit="reply", disable=not progress):
        fp = expected[key]
        try:
            probs = instance.probabilities(store.root / replies[key].audio)
            label, p = top(probs)
            rec = ProbeRecord(*key, "ok", fp, probs=probs, top=label, top_prob=p,
                              backend=probe, model=model)  # fmt: skip
        except (KeyboardInterrupt, SystemExit, ImportError):
            raise
        except (ValueError, RuntimeError, OSError) as exc:
            if strict:
                raise
            rec = ProbeRecord(*key, "error", fp, backend=probe, model=model,
                              error=f"{type(exc).__name__}: {exc}")  # fmt: skip
        store.append("probe", rec)
        counts["called"] += 1
        counts[rec.status] += 1
    return counts
