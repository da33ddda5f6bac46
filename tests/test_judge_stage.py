"""The judge stage, SRD/MRD, the gate and their wiring into run / score / report.

Two named stand-ins keep these tests fast and about the plumbing, not about any judge's quality:
``TextASRStandIn`` (instead of Whisper: returns the text each reply was synthesised from) and
``OverlapJudgeStandIn`` (instead of an LLM judge: word/character overlap rules, stated below).
The offline judge's own end-to-end gate test is in test_judge_gate_offline.py.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from stylebench.config import RunConfig
from stylebench.metrics import judge as judge_mod
from stylebench.metrics.asr_types import Transcript
from stylebench.metrics.judge import JudgeError, JudgeRequest, Verdict
from stylebench.pipeline import report_only, rescore, run
from stylebench.records import DecodeConfig, Turn
from stylebench.registry import LazyRegistry
from stylebench.relevance import eligible, mrd_exclusions, relevance_score
from stylebench.stages.judge import MRD_TURN, SRD_TURN, make_judge
from stylebench.store import RunStore


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


def _install_standins(mp: pytest.MonkeyPatch, root: Path) -> None:
    from stylebench.stages import transcribe

    entries = dict(judge_mod.JUDGES.items())
    entries["overlap-standin"] = "test_judge_stage:OverlapJudgeStandIn"
    mp.setattr(judge_mod, "JUDGES", LazyRegistry("judge", entries))
    mp.setattr(transcribe, "make_asr", lambda backend, model: TextASRStandIn(root))
    mp.setenv("STYLEBENCH_CACHE", str(root / "cache"))
    OverlapJudgeStandIn.calls = 0


@pytest.fixture
def standins(monkeypatch, tmp_path):
    """Register the stand-in judge and route transcription through the stand-in ASR."""
    _install_standins(monkeypatch, tmp_path)


@pytest.fixture(scope="module")
def reference_run(small_set, tmp_path_factory):
    """One finished run (reference, volume, en, 2 samples, stand-in judge), built once."""
    root = tmp_path_factory.mktemp("judge-base")
    with pytest.MonkeyPatch.context() as mp:
        _install_standins(mp, root)
        res = run(cfg_for(small_set, root), progress=False)
        return res, OverlapJudgeStandIn.calls


def copy_of(res, tmp_path: Path) -> RunStore:
    """A private copy of a finished run folder (tests append to it)."""
    dest = tmp_path / res.store.root.name
    shutil.copytree(res.store.root, dest)
    return RunStore(dest)


def cfg_for(small_set, tmp_path, **kw) -> RunConfig:
    base = {"model": "reference", "dim": "volume", "lang": "en", "dialogues": str(small_set),
            "out": str(tmp_path), "vad": "energy", "n_boot": 200, "judge": "overlap-standin",
            "limit": 1}  # fmt: skip
    return RunConfig(**{**base, **kw})


def test_relevance_score_and_gate_definitions():
    labels = {"a": "relevant", "b": "irrelevant", "c": "relevant", "d": "unparseable", "e": "error", "f": None}  # fmt: skip
    s = relevance_score("mrd", labels, n_boot=200)
    assert s.rate == pytest.approx(200 / 3) and (s.n, s.n_judged, s.n_relevant) == (6, 3, 2)
    assert (s.n_unparseable, s.n_error, s.n_missing) == (1, 1, 1)
    assert 0.0 <= s.ci[0] <= s.rate <= s.ci[1] <= 100.0
    at = relevance_score("mrd", {"a": "relevant", "b": "irrelevant", "c": "irrelevant", "d": "irrelevant", "e": "relevant"})  # fmt: skip
    assert at.rate == 40.0 and eligible(at, 40.0) is False  # at the threshold: not eligible
    assert eligible(at, 39.99) is True
    assert eligible(relevance_score("mrd", {"a": "unparseable"}), 40.0) is None
    assert mrd_exclusions(labels) == ["b", "d", "e", "f"]


def test_stage_keys_report_and_resume(small_set, tmp_path, standins, reference_run):
    res, calls = reference_run
    recs = res.store.load("judge")
    ids = {k[0] for k in recs}
    assert len(ids) == 2 and len(recs) == 4
    assert {recs[(i, SRD_TURN)].kind for i in ids} == {"srd"}
    assert {recs[(i, MRD_TURN)].kind for i in ids} == {"mrd"}
    assert all(r.label == "relevant" and r.backend == "overlap-standin" for r in recs.values())
    rep = res.report
    assert (rep["srd"], rep["mrd"], rep["eligible"]) == (100.0, 100.0, True)
    assert rep["srd_ci"] == [100.0, 100.0] and rep["judge"]["backend"] == "overlap-standin"
    assert rep["relevance"]["mrd"]["n_judged"] == 2 and res.counts["judge"]["asked"] == 4
    assert res.store.read_manifest()["judge"] == {
        "backend": "overlap-standin",
        "model": "overlap-v1",
    }
    assert any("approximation of the paper's judge (Qwen3-4B-Instruct)" in n for n in rep["notes"])
    assert calls == 4
    copy_of(res, tmp_path)
    again = run(cfg_for(small_set, tmp_path), progress=False)  # resume the copy: nothing to judge
    assert again.counts["judge"]["skipped"] == 4 and again.counts["judge"]["asked"] == 0
    assert OverlapJudgeStandIn.calls == 0 and again.report["mrd"] == 100.0


def test_rejudge_changes_only_judge_records_and_never_calls_the_model(tmp_path, standins, monkeypatch, reference_run):  # fmt: skip
    from stylebench.model_wrappers import reference
    from stylebench.stages import transcribe

    first = SimpleNamespace(store=copy_of(reference_run[0], tmp_path), report=reference_run[0].report)  # fmt: skip
    frozen = {s: first.store.stage_path(s).read_bytes() for s in ("respond", "transcribe", "features")}  # fmt: skip
    judged = first.store.stage_path("judge").read_bytes()

    def boom(*a, **k):
        raise AssertionError("a model or the ASR was called while re-judging")

    monkeypatch.setattr(reference.ReferenceModel, "respond", boom)
    monkeypatch.setattr(transcribe, "make_asr", boom)
    again = rescore(first.store.root, {"judge": "overlap-standin", "judge_model": "overlap-v2"}, progress=False)  # fmt: skip
    assert {s: first.store.stage_path(s).read_bytes() for s in frozen} == frozen
    after = first.store.stage_path("judge").read_bytes()
    assert after.startswith(judged) and len(after.splitlines()) == 8  # 4 new records appended
    assert again.report["judge"]["model"] == "overlap-v2" and again.counts["judge"]["asked"] == 4
    assert again.report["cells"] == first.report["cells"]  # style scores untouched
    back = rescore(first.store.root, {"judge_model": "overlap-v1"}, progress=False)
    assert back.counts["judge"]["asked"] == 0  # v1's verdicts are still in the run folder


def test_cli_rejudges_with_the_http_backend(tmp_path, standins, monkeypatch, capsys, reference_run):
    """`stylebench score RUN --judge openai ...` against a loopback chat server, then `report`."""
    from test_judge_openai import ChatServer

    from stylebench.cli import main
    from stylebench.model_wrappers import reference

    first = SimpleNamespace(store=copy_of(reference_run[0], tmp_path), report=reference_run[0].report)  # fmt: skip
    frozen = {s: first.store.stage_path(s).read_bytes() for s in ("respond", "transcribe", "features")}  # fmt: skip
    monkeypatch.setattr(reference.ReferenceModel, "respond", lambda *a, **k: 1 / 0)
    srv = ChatServer()
    srv.content = '{"label": "irrelevant", "reason": "stand-in server says so"}'
    try:
        argv = ["--no-progress", "score", str(first.store.root), "--judge", "openai", "--judge-model",
                "standin-judge", "--judge-url", srv.url, "--format", "json"]  # fmt: skip
        assert main(argv) == 0
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()
    assert len(srv.bodies) == 4  # 2 samples x (SRD, MRD)
    capsys.readouterr()
    assert main(["report", str(first.store.root), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["judge"]["backend"] == "openai" and rep["judge"]["model"] == "standin-judge"
    assert (rep["srd"], rep["mrd"], rep["srd_ci"], rep["mrd_ci"], rep["eligible"]) == (0.0, 0.0, [0.0, 0.0], [0.0, 0.0], False)  # fmt: skip
    assert {s: first.store.stage_path(s).read_bytes() for s in frozen} == frozen
    assert rep["cells"] == first.report["cells"]
    manifest = first.store.read_manifest()
    assert manifest["judge"]["prompts"]["srd"]["name"] == "srd_v1.txt"
    assert manifest["judge"]["url"] == srv.url and "api_key" not in json.dumps(manifest).replace("api_key_env", "")  # fmt: skip


def test_shuffled_is_not_eligible_and_its_cells_are_marked(small_set, tmp_path, standins):
    res = run(cfg_for(small_set, tmp_path, model="shuffled"), progress=False)
    rep = res.report
    assert rep["eligible"] is False and rep["mrd"] == 0.0 and rep["srd"] == 100.0
    assert all(c["eligible"] is False for c in rep["relevance"]["by_cell"])
    assert len(rep["cells"]) == 4 and all(c["n_ok"] == c["n"] == 1 for c in rep["cells"])
    md = (res.store.root / "report.md").read_text(encoding="utf-8")
    assert "Not eligible for style scores" in md.split("## volume")[0]
    rows = [r for r in md.split("## volume")[1].split("##")[0].splitlines() if r.startswith("| ") and ("intensify" in r or "attenuate" in r)]  # fmt: skip
    assert len(rows) == 4 and all(r.count("✗") == 2 for r in rows)  # VSP and SVD marked
    assert "## Relevance (judge)" in md and "NOT eligible" in md
    csv = (res.store.root / "report.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].endswith(",eligible") and all(r.endswith(",false") for r in csv[1:])
    filtered = rescore(res.store.root, {"filter_mrd": True}, progress=False).report
    assert filtered["relevance"]["n_excluded"] == 2 and filtered["cells"] == []
    assert json.loads((res.store.root / "report.json").read_text())["eligible"] is False


def test_unparseable_and_failed_verdicts_are_counted_apart(small_set, tmp_path, standins, monkeypatch):  # fmt: skip
    from stylebench.stages import transcribe

    class Marking(TextASRStandIn):
        """Marks the 1st transcript GARBLE and the 4th OUTAGE (call order: sample 1's turn 1,
        then sample 2's turn 1): one unparseable and one failed verdict for SRD and for MRD."""

        n = 0

        def transcribe(self, wave, sr, lang):
            tr = super().transcribe(wave, sr, lang)
            self.n += 1
            mark = {1: " GARBLE", 4: " OUTAGE"}.get(self.n, "")
            return Transcript(tr.text + mark, lang, (), "x", "y", ())

    monkeypatch.setattr(transcribe, "make_asr", lambda b, m: Marking(tmp_path))
    res = run(cfg_for(small_set, tmp_path), progress=False)
    recs = res.store.load("judge")
    for turn, kind in ((SRD_TURN, "srd"), (MRD_TURN, "mrd")):
        got = res.report["relevance"][kind]
        mine = [r for r in recs.values() if r.turn == turn]
        n_garbled = sum(r.label == "unparseable" for r in mine)
        n_out = sum(r.status == "error" for r in mine)
        assert (got["n_unparseable"], got["n_error"]) == (n_garbled, n_out)
        assert got["n_judged"] == got["n"] - n_garbled - n_out == len(mine) - n_garbled - n_out
    errors = [r for r in recs.values() if r.status == "error"]
    unparseable = [r for r in recs.values() if r.label == "unparseable"]
    assert (len(errors), len(unparseable)) == (2, 2)  # see Marking
    assert all(r.error.startswith("JudgeError") for r in errors)
    assert all(r.label == "" for r in errors)
    before = len(res.store.stage_path("judge").read_text().splitlines())
    # failures are retried on resume, unparseable verdicts kept; here the retried ones all fail
    # again, which the stage treats as a systematic failure and stops on
    with pytest.raises(JudgeError, match="every request of the first batch failed"):
        rescore(res.store.root, {}, progress=False)
    assert len(res.store.stage_path("judge").read_text().splitlines()) == before + len(errors)


def test_asr_none_skips_a_transcript_judge_with_a_note(small_set, tmp_path, standins):
    res = run(cfg_for(small_set, tmp_path, asr="none", judge_input="transcript"), progress=False)
    rep = res.report
    assert rep["eligible"] is None and rep["mrd"] is None and "judge" not in res.counts
    assert "--asr none" in rep["judge"]["skipped"]
    assert any("relevance gate not applied" in n for n in rep["notes"])
    assert not res.store.stage_path("judge").exists()
    assert "Eligibility unknown" in (res.store.root / "report.md").read_text(encoding="utf-8")
    assert report_only(res.store.root).report["eligible"] is None
    # the default (auto) judges the text channel when there is no ASR, and says so
    auto = run(cfg_for(small_set, tmp_path / "auto", asr="none"), progress=False).report
    assert auto["eligible"] is True and auto["judge"]["sources"] == {"text": 2}
    assert any("no ASR (--asr none)" in n for n in auto["notes"])


def test_auto_input_falls_back_to_the_text_channel_for_unfaithful_transcripts(tmp_path, standins, reference_run):  # fmt: skip
    from stylebench.dialogues.sets import load_set
    from stylebench.records import TranscriptRecord
    from stylebench.stages.judge import sample_inputs

    store = copy_of(reference_run[0], tmp_path)
    cfg = RunConfig(**store.read_manifest()["config"])
    replied = {sid for sid, _ in store.load("respond")}
    samples = [s for s in load_set(cfg.dialogues)[0] if s.id in replied]
    assert len(samples) == 2
    asr = (cfg.asr, cfg.asr_model)
    assert {src for src, _ in sample_inputs(store, samples, asr, 0.3).values()} == {"transcript"}
    # the ASR mishears turn 3 of the first sample: a later record for the same reply wins
    sid = samples[0].id
    old = store.load("transcribe")[(sid, 3)]
    store.append("transcribe", TranscriptRecord(sid, 3, "ok", old.fp, text="bananas in pyjamas", lang="en"))  # fmt: skip
    texts = {k: r.text for (s_, k), r in store.load("respond").items() if s_ == sid}
    auto = sample_inputs(store, samples, asr, 0.3)
    assert auto[sid] == ("text_fallback", texts) and auto[samples[1].id][0] == "transcript"
    assert sample_inputs(store, samples, asr)[sid][1][3] == "bananas in pyjamas"  # transcript mode
    rep = rescore(store.root, {"judge_input": "auto"}, progress=False).report
    assert rep["judge"]["sources"] == {"text_fallback": 1, "transcript": 1}
    assert any("text channel for 1 whose transcripts disagreed" in n for n in rep["notes"])
    assert rep["mrd"] == 100.0  # judged on what the model wrote, not on the misheard transcript
    forced = rescore(store.root, {"judge_input": "transcript"}, progress=False).report
    assert forced["mrd"] == 50.0  # the overlap stand-in sees the misheard turn 3


def test_make_judge_options():
    with pytest.raises(ValueError, match="uses no prompt"):
        make_judge(RunConfig(judge="offline", judge_prompt="/tmp"))
    with pytest.raises(ValueError, match="needs a model"):
        make_judge(RunConfig(judge="openai"))
    with pytest.raises(ValueError, match="takes no --judge-url"):
        make_judge(RunConfig(judge="transformers", judge_model="m", judge_url="http://x/v1"))
    with pytest.raises(KeyError, match="did you mean"):
        make_judge(RunConfig(judge="opena1"))
    assert make_judge(RunConfig(judge="none")) is None
    j = make_judge(RunConfig(judge="openai", judge_model="m", judge_url="http://h:1/v1", judge_args={"concurrency": "2", "timeout_s": "5"}))  # fmt: skip
    assert (j.concurrency, j.timeout_s, j.url) == (2, 5.0, "http://h:1/v1")
    with pytest.raises(ValueError, match="mrd_threshold"):
        RunConfig(mrd_threshold=140)


def test_shuffled_model_swaps_content_and_keeps_the_steps(tmp_path, monkeypatch):
    from stylebench.model_wrappers._espeak_model import step_style
    from stylebench.model_wrappers.reference import ReferenceModel
    from stylebench.model_wrappers.shuffled import ShuffledModel, other_contents

    monkeypatch.setenv("STYLEBENCH_SCRATCH", str(tmp_path))
    script = {"dim": "emotion", "direction": "intensify", "lang": "en", "emotion": "sad",
              "content": "Water boils at one hundred degrees Celsius at sea level."}  # fmt: skip
    user = Turn("user", "Say it again, sadder.", None, None, raw={"script": script})
    history: list = []
    for k in range(3):
        ref = ReferenceModel().respond(history, user, DecodeConfig())
        shf = ShuffledModel().respond(history, user, DecodeConfig())
        assert ref.raw["style"] == shf.raw["style"] == vars(step_style("emotion", "intensify", k, emotion="sad"))  # fmt: skip
        assert (shf.text == script["content"]) is (k == 0) and shf.raw["shuffled"] is (k > 0)
        history += [user, ref]
    from stylebench.dialogues.builder import load_contents

    content = load_contents("zh")[0].content
    others = other_contents(content, "zh", 0)
    assert content not in others and others == other_contents(content, "zh", 0)
    assert len(set(others[1:3])) == 2 and all(re.search("[\u4e00-\u9fff]", o) for o in others)


def test_unreachable_judge_stops_with_a_clear_cli_error(tmp_path, standins, capsys, reference_run):
    import socket

    from stylebench.cli import main

    store = copy_of(reference_run[0], tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    argv = ["--no-progress", "score", str(store.root), "--judge", "openai", "--judge-model", "m",
            "--judge-url", f"http://127.0.0.1:{port}/v1", "--judge-arg", "retries=0"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "every request of the first batch failed" in err and "Traceback" not in err
    recs = [r for r in store.iter_raw("judge") if r["backend"] == "openai"]
    assert len(recs) == 4 and all(r["status"] == "error" and "failed after 1 try" in r["error"] for r in recs)  # fmt: skip


def test_text_channel_input_needs_no_asr(small_set, tmp_path, standins):
    res = run(cfg_for(small_set, tmp_path, asr="none", judge_input="text"), progress=False)
    rep = res.report
    assert (rep["srd"], rep["mrd"], rep["eligible"]) == (100.0, 100.0, True)
    assert rep["judge"]["input"] == "text" and not res.store.stage_path("transcribe").exists()
    assert any("text channel" in n for n in rep["notes"])
    texts = {(r.sample_id, r.turn): r.text for r in res.store.load("respond").values()}
    req_fp = {k: r.fp for k, r in res.store.load("judge").items()}
    assert len(req_fp) == 4 and all((sid, 1) in texts for sid, _ in req_fp)
    with pytest.raises(ValueError, match="judge_input"):
        RunConfig(judge_input="audio")
