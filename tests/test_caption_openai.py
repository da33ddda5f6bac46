"""The openai captioner, the LLM caption judge and FLEUR against one loopback chat-completions
server (127.0.0.1, canned answers): request bodies, fingerprints, resume, and injections."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standins.judge import cfg_for
from test_judge_openai import INJECTIONS

from stylebench.commands.runs import run
from stylebench.metrics.captions.base import CompareRequest, load_instruction
from stylebench.metrics.captions.openai_api import OpenAICaptionJudge, OpenAIFleur
from stylebench.metrics.judges.prompting import fence_json
from stylebench.pipeline.keys import fingerprint
from stylebench.stages.caption import CAPTION_STAGE_VERSION

CAPTION = "The pitch is clearly higher than usual."
VERDICT = '{"verdict": "increased", "reason": "the second caption says higher"}'


def _digit(tok, probs):
    return {
        "token": tok,
        "logprob": math.log(max(probs.values())),
        "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in probs.items()],
    }


LOGPROBS = [
    _digit("0", {"0": 1.0}),
    _digit(".", {".": 1.0}),
    _digit("8", {"8": 0.7, "9": 0.3}),
    _digit("5", {"5": 0.6, "4": 0.4}),
]


class CannedServer:
    """Answers by what is asked: audio + logprobs -> FLEUR digits, audio -> a caption, text -> a verdict."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        self.verdict = VERDICT
        srv, lock = self, threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    srv.bodies.append(body)
                content = body["messages"][-1]["content"]
                audio = isinstance(content, list) and content[0]["type"] == "input_audio"
                if body.get("logprobs"):
                    choice = {
                        "message": {"role": "assistant", "content": "0.85"},
                        "logprobs": {"content": LOGPROBS},
                    }
                else:
                    choice = {
                        "message": {
                            "role": "assistant",
                            "content": CAPTION if audio else srv.verdict,
                        }
                    }
                data = json.dumps(
                    {"object": "chat.completion", "choices": [{"index": 0, **choice}]}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def kind(self, b: dict) -> str:
        c = b["messages"][-1]["content"]
        return "fleur" if b.get("logprobs") else "caption" if isinstance(c, list) else "judge"


@pytest.fixture
def server():
    srv = CannedServer()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def _cfg(small_set, tmp_path, url, **kw):
    return cfg_for(
        small_set,
        tmp_path,
        dim="pitch",
        judge="none",
        asr="none",
        captioner="openai",
        caption_model="cap-model",
        caption_url=url,
        caption_judge="openai",
        caption_judge_model="judge-model",
        caption_judge_url=url,
        judge_cache=False,
        caption_args={"concurrency": "3", "retries": "0"},
        **kw,
    )


def test_openai_captioner_and_llm_judge_end_to_end_with_resume(small_set, tmp_path, server):
    res = run(_cfg(small_set, tmp_path, server.url), progress=False)
    kinds = [server.kind(b) for b in server.bodies]
    assert kinds.count("caption") == 6 and kinds.count("judge") == 4
    replies = {
        json.loads(x)["sha256"]: json.loads(x)
        for x in res.store.stage_path("respond").read_text().splitlines()
    }
    ins = load_instruction("pitch")
    for b in (b for b in server.bodies if server.kind(b) == "caption"):
        audio, text = b["messages"][0]["content"]
        wav = base64.b64decode(audio["input_audio"]["data"])
        assert wav[:4] == b"RIFF" and hashlib.sha256(wav).hexdigest() in replies  # the reply itself
        assert text == {"type": "text", "text": ins.text.replace("{{language}}", "English")}
        assert b["model"] == "cap-model" and b["temperature"] == 0.0
    caps = [json.loads(x) for x in res.store.stage_path("caption").read_text().splitlines()]
    desc = res.report["captions"]["describe"]["captioner"]
    base = fingerprint("caption", CAPTION_STAGE_VERSION, desc)
    by_key = {(r["sample_id"], r["turn"]): r for r in replies.values()}
    for c in caps:  # the fingerprint holds the captioner, the instruction's hash and the reply's
        assert c["status"] == "ok" and c["text"] == CAPTION
        assert c["fp"] == fingerprint(
            base, ins.sha256, by_key[(c["sample_id"], c["turn"])]["sha256"], []
        )
    cells = {c["direction"]: c for c in res.report["captions"]["cells"]}
    assert (
        cells["intensify"]["vsp"] == 100.0 and cells["attenuate"]["vsp"] == 0.0
    )  # canned "increased"
    assert res.report["captions"]["circular"] is False
    n = len(server.bodies)
    again = run(
        _cfg(small_set, tmp_path, server.url), progress=False
    )  # resume: nothing asked again
    assert (
        len(server.bodies) == n
        and again.counts["caption"]["ok"] == 0
        and again.counts["caption_judge"]["ok"] == 0
    )
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "pitch.txt").write_text("Describe the pitch in {{language}}, briefly.")
    third = run(_cfg(small_set, tmp_path, server.url, caption_prompt=str(folder)), progress=False)
    assert third.counts["caption"]["ok"] == 6  # a new prompt hash: new captions beside the old ones
    assert (
        server.bodies[n]["messages"][0]["content"][1]["text"]
        == "Describe the pitch in English, briefly."
    )
    from stylebench.commands.runs import rescore

    m = len(server.bodies)  # another captioner on re-scoring: the openai one's options are dropped
    other = rescore(
        res.store.root, {"captioner": "features", "caption_judge": "lexicon"}, progress=False
    )
    assert other.counts["caption"]["ok"] == 6 and len(server.bodies) == m
    assert other.report["captions"]["circular"] is True


def test_unparseable_judge_reply_is_its_own_label(server):
    server.verdict = 'Sure! {"verdict": "increased", "reason": "x"}'
    j = OpenAICaptionJudge("judge-model", server.url, retries=0)
    assert j.compare(CompareRequest("pitch", "en", "a", "b")).label == "unparseable"
    server.verdict = '{"verdict": "louder", "reason": "x"}'
    assert j.compare(CompareRequest("pitch", "en", "a", "b")).label == "unparseable"


def test_fleur_from_served_logprobs_is_0876(server, tmp_path):
    wav = tmp_path / "a.wav"
    import numpy as np
    import soundfile as sf

    sf.write(wav, np.zeros(1600, dtype="float32"), 16000)
    out = OpenAIFleur("lalm", server.url, retries=0).score(wav, "a quiet room")
    assert out["fleur"] == pytest.approx(0.876) and out["raw_score"] == 0.85
    body = server.bodies[-1]
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    audio, text = body["messages"][0]["content"]
    assert base64.b64decode(audio["input_audio"]["data"]) == wav.read_bytes()
    assert fence_json({"caption": "a quiet room"}, "CAPTION")[1] in text["text"]


def test_injections_in_captions_stay_fenced_and_cannot_flip_the_verdict(server):
    server.verdict = '{"verdict": "decreased", "reason": "lower"}'
    j = OpenAICaptionJudge("judge-model", server.url, concurrency=4, retries=0)
    reqs = [
        CompareRequest("volume", lang, "The voice is loud.", t)
        for t in INJECTIONS
        for lang in ("en", "zh")
    ]
    assert all(v.label == "decreased" for v in j.compare_many(reqs))
    sent = {b["messages"][-1]["content"]: b for b in server.bodies}
    prompt = j.compare_prompt
    for req in reqs:
        begin, data, end = fence_json({"before": req.before, "after": req.after}, "CAPTIONS")
        system, user = sent[j.compare_messages(req)[-1].content]["messages"]
        assert system["content"] == prompt.system  # no data in the rubric
        assert user["content"].count(begin) == 1 and user["content"].count(end) == 1
        inside = user["content"].split(begin + "\n")[1].split("\n" + end)[0]
        assert (
            inside == data
            and len(inside.splitlines()) == 1
            and not set(inside) & set("<>\n\r\u2028\u2029\x85")
        )
        assert json.loads(inside)["after"] == req.after


def test_caption_eval_of_a_run_fleur_ties_and_styleinstructcaps(small_set, tmp_path, server):
    from stylebench.commands.caption_eval import EvalOptions, evaluate

    res = run(_cfg(small_set, tmp_path, server.url, lang="all"), progress=False)
    server.verdict = (
        '{"score": 7, "reason": "consistent"}'  # a meta answer; not a valid hallucination/IFA one
    )
    n = len(server.bodies)
    out = evaluate(
        res.store.root,
        EvalOptions(
            judge_url=server.url,
            judge_model="judge-model",
            fleur_url=server.url,
            fleur_model="lalm",
        ),
    )
    assert out["n_captions"] == 12 and len(server.bodies) == n + 3 * 12 + 12  # nothing re-captioned
    sic = out["styleinstructcaps"]
    assert sic["meta"]["mean_score"] == 7.0 and sic["meta"]["n_ok"] == 12
    assert sic["hallucination"]["n_unparseable"] == 12 and sic["ifa"]["n_unparseable"] == 12
    caf = out["caf"]
    assert caf["fleur_n_ok"] == 12 and all(
        p["fleur"] == pytest.approx(0.876) for p in caf["per_caption"]
    )
    assert caf["ties"]["fleur"] == {
        "n_pairs": 8,
        "tie_rate": 1.0,
    }  # one canned distribution: all tie
    sc = out["speaker_consistency"]
    assert (
        sc["eer"] == 0.5 and "E5-small" in sc["encoder"]
    )  # identical captions tell no speaker apart
    assert json.loads((res.store.root / "caption_eval.json").read_text())["n_captions"] == 12
