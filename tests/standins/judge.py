"""Named stand-ins for the judge-stage tests (tests/test_judge_stage.py, test_judge_runs.py).

``TextASRStandIn`` replaces Whisper (it returns the text each reply was synthesised from) and
``OverlapJudgeStandIn`` replaces an LLM judge (word/character overlap rules, stated below), so
those tests are about the plumbing, not about any judge's quality. The fixtures ``standins`` and
``reference_run`` (tests/conftest.py) install them.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from stylebench.config import RunConfig, make_config
from stylebench.metrics.asr.transcript import Transcript
from stylebench.metrics.judges import base as judge_mod
from stylebench.metrics.judges.base import JudgeError, JudgeRequest, Verdict
from stylebench.records import from_json_dict
from stylebench.registry import LazyRegistry
from stylebench.store import RunStore


def latest(store: RunStore, stage: str) -> dict:
    """Test helper: the last record per key in a stage file, whatever its fingerprint."""
    out = {}
    for d in store.iter_raw(stage):
        out[(d["sample_id"], d["turn"])] = from_json_dict(stage, d)
    return out


class TextASRStandIn:
    """Stand-in for Whisper (NOT an ASR): the text a reply was synthesised from, looked up by the
    hash of its decoded audio in the respond records under ``root``."""

    name = "text-standin"

    def __init__(self, root: Path) -> None:
        from stylebench.audio import load_audio

        self.by_hash = {}
        for rec_file in Path(root).rglob("respond.jsonl"):
            for line in rec_file.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                if rec["status"] == "ok":
                    wave, _ = load_audio(rec_file.parent / rec["audio"], target_sr=16000)
                    self.by_hash[hashlib.sha256(wave.tobytes()).hexdigest()] = rec["text"]

    def transcribe(self, wave, sr, lang):
        text = self.by_hash[hashlib.sha256(wave.tobytes()).hexdigest()]
        return Transcript(text, lang, (), "text-standin", "standin", ())


def tokens(text: str) -> set[str]:
    """Han characters, and the first 5 letters of English words of 4+ letters (a crude stem)."""
    words = {w[:5] for w in re.findall(r"[a-z]{4,}", text.lower())}
    return {c for c in text if "\u4e00" <= c <= "\u9fff"} | words


class OverlapJudgeStandIn:
    """Stand-in judge (NOT an LLM): SRD relevant iff the reply shares a token (a Han character,
    or the 5-letter stem of an English word) with the request; MRD relevant iff turns 2 and 3 each
    share >= 60% of the turn-1 reply's tokens. A reply containing "GARBLE" is unparseable and
    one containing "OUTAGE" fails like an unreachable endpoint."""

    name = "overlap-standin"
    calls = 0

    def __init__(self, model: str | None = None) -> None:
        self.model = model or "overlap-v1"

    def describe(self):
        return {"backend": "overlap-standin", "model": self.model}

    def judge(self, req: JudgeRequest) -> Verdict:
        type(self).calls += 1
        replies = [a for _, a in req.turns]
        if any("OUTAGE" in r for r in replies):
            raise JudgeError("stand-in endpoint unreachable")
        if any("GARBLE" in r for r in replies):
            return Verdict("unparseable", reason="stand-in garbled reply")
        if req.kind == "srd":
            ok = bool(tokens(req.turns[0][0]) & tokens(replies[0]))
        else:
            ref = tokens(replies[0])
            ok = bool(ref) and all(len(ref & tokens(r)) >= 0.6 * len(ref) for r in replies[1:])
        return Verdict("relevant" if ok else "irrelevant", reason="overlap rule")


def install_standins(mp: pytest.MonkeyPatch, root: Path) -> None:
    from stylebench.stages import transcribe

    entries = dict(judge_mod.JUDGES.items())
    entries["overlap-standin"] = "standins.judge:OverlapJudgeStandIn"
    mp.setattr(judge_mod, "JUDGES", LazyRegistry("judge", entries))
    mp.setattr(transcribe, "make_asr", lambda backend, model, **options: TextASRStandIn(root))
    mp.setenv("STYLEBENCH_CACHE", str(root / "cache"))
    OverlapJudgeStandIn.calls = 0


def copy_of(res, tmp_path: Path) -> RunStore:
    """A private copy of a finished run folder (tests append to it)."""
    dest = tmp_path / res.store.root.name
    shutil.copytree(res.store.root, dest)
    return RunStore(dest)


def cfg_for(small_set, tmp_path, **kw) -> RunConfig:
    base = {
        "model": "reference",
        "dim": "volume",
        "lang": "en",
        "dialogues": str(small_set),
        "out": str(tmp_path),
        "vad": "energy",
        "n_boot": 200,
        "judge": "overlap-standin",
        "limit": 1,
    }
    return make_config(**{**base, **kw})
