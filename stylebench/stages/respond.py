"""respond: drive a model through the three turns of every sample, history kept.

A reply's wav is moved into the run folder before its record is appended, so a kill at any point
loses at most the reply in flight. Resume rebuilds each sample's history from the stored records
and asks the model only for turns that are not yet ``ok``.
"""

from __future__ import annotations

import logging
import shutil
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from stylebench.audio import sha256_file
from stylebench.model_wrappers.base import SpeechModel
from stylebench.records import DecodeConfig, RespondRecord, Sample, Turn
from stylebench.stages import fingerprint
from stylebench.store import RunStore

log = logging.getLogger(__name__)


def user_turn_of(sample: Sample, k: int, set_root: Path) -> Turn:
    """The k-th (1-based) user turn, with the dialogue script attached for embedded models."""
    ut = sample.turns[k - 1]
    script = {
        "content": sample.content,
        "dim": sample.dim,
        "direction": sample.direction,
        "lang": sample.lang,
        "emotion": sample.emotion,
        "turn": k,
    }
    return Turn("user", ut.text, str(set_root / ut.audio), ut.sr, raw={"script": script})


def turn_fp(
    model_fp: str, decode: DecodeConfig, sample: Sample, k: int, prior_shas: list[str]
) -> str:
    return fingerprint("respond", model_fp, asdict(decode), asdict(sample), k, prior_shas)


def run_respond(
    store: RunStore,
    samples: Sequence[Sample],
    model: SpeechModel,
    model_fp: str,
    decode: DecodeConfig,
    set_root: Path,
    *,
    strict: bool = False,
    progress: bool = True,
) -> dict[str, int]:
    """Respond to every turn not yet done; returns counts of calls made, ok and errors."""
    from tqdm import tqdm

    done = store.load("respond")
    counts = {"called": 0, "ok": 0, "error": 0, "skipped": 0}
    bar = tqdm(total=len(samples) * 3, desc="respond", unit="turn", disable=not progress)
    for sample in samples:
        history: list[Turn] = []
        prior: list[str] = []
        broken = ""
        for k in (1, 2, 3):
            fp = turn_fp(model_fp, decode, sample, k, prior)
            user = user_turn_of(sample, k, set_root)
            rec = done.get((sample.id, k))
            if broken:
                if not (rec and rec.fp == fp and rec.status == "error"):
                    store.append("respond", RespondRecord(sample.id, k, "error", fp, error=broken))
                counts["error"] += 1
                bar.update(1)
                continue
            if rec is not None and rec.fp == fp and rec.status == "ok":
                counts["skipped"] += 1
            else:
                rec = _call(store, model, history, user, decode, sample.id, k, fp, strict)
                counts["called"] += 1
                counts[rec.status] += 1
            bar.update(1)
            if rec.status != "ok":
                broken = f"not asked: turn {k} failed ({rec.error.splitlines()[0][:200]})"
                continue
            # raw goes back too: some models resume a dialogue from state they stored there
            reply = Turn("assistant", rec.text, str(store.root / rec.audio), rec.sr, dict(rec.raw))
            history += [user, reply]
            prior.append(rec.sha256)
    bar.close()
    return counts


def _call(
    store: RunStore,
    model: SpeechModel,
    history: list[Turn],
    user: Turn,
    decode: DecodeConfig,
    sample_id: str,
    k: int,
    fp: str,
    strict: bool,
) -> RespondRecord:
    t0 = time.perf_counter()
    try:
        reply = model.respond(tuple(history), user, decode)
        if reply.audio is None or not Path(reply.audio).is_file():
            raise RuntimeError(f"model returned no audio file (audio={reply.audio!r})")
        dest = store.audio_path(sample_id, k)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".part")
        shutil.copyfile(reply.audio, tmp)
        tmp.replace(dest)
        Path(reply.audio).unlink(missing_ok=True)
        rec = RespondRecord(
            sample_id,
            k,
            "ok",
            fp,
            text=reply.text,
            audio=str(dest.relative_to(store.root)),
            sr=int(reply.sr or 0),
            sha256=sha256_file(dest),
            elapsed_s=round(time.perf_counter() - t0, 3),
            raw=_jsonable(reply.raw),
        )
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        if strict:
            raise
        log.debug("respond failed for %s turn %d", sample_id, k, exc_info=True)
        err = f"{type(exc).__name__}: {exc}"
        tb = traceback.format_exc(limit=3)
        rec = RespondRecord(
            sample_id,
            k,
            "error",
            fp,
            error=err,
            elapsed_s=round(time.perf_counter() - t0, 3),
            raw={"traceback": tb},
        )
    store.append("respond", rec)
    return rec


def _jsonable(d: dict) -> dict:
    import json

    try:
        json.dumps(d)
        return d
    except TypeError:
        return {k: repr(v) for k, v in d.items()}
