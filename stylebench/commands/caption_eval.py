"""``stylebench caption-eval RUN``: judge the captioner of a run (docs/captioning.md).

Reads the run's current caption records (nothing is captioned again) and computes, for what it is
given: speaker-caption consistency over the dialogue voices (:mod:`stylebench.metrics.captions.speaker`),
the StyleInstructCaps meta-score, hallucination and IFA with an LLM judge
(:mod:`stylebench.metrics.captions.sic`), and CAF-Score: S-CLAP with a CLAP model, FLEUR from a
served audio LLM's digit probabilities, ``S_CAF``, and the tie rates of raw LLM scores and of FLEUR
over the caption pairs of consecutive turns (:mod:`stylebench.metrics.captions.caf`). The result
is written to ``caption_eval.json`` in the run folder. It is recomputed on every call (the LLM
calls are not cached in v1).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stylebench.errors import BadValue
from stylebench.records import CAPTIONS, PAIRS, CaptionRecord, Key, Sample

if TYPE_CHECKING:
    from stylebench.commands.scored import ScoredRun


@dataclass(frozen=True)
class EvalOptions:
    judge_url: str | None = None
    judge_model: str | None = None
    fleur_url: str | None = None
    fleur_model: str | None = None
    clap: str | None = None
    clap_mode: str = "max_cosine"
    alpha: float = 0.8
    speakers: bool = True

    def __post_init__(self) -> None:
        """An option that nothing would read is refused, and a URL checked, before the run is
        opened."""
        from stylebench.options import check_url

        without = "without {0} it would be ignored; drop {1} or add {0}"
        ignored = [
            ("--eval-judge-model", self.judge_model, self.judge_url, "--eval-judge-url"),
            ("--fleur-model", self.fleur_model, self.fleur_url, "--fleur-url"),
            ("--clap-mode", self.clap_mode != "max_cosine" or None, self.clap, "--clap"),
        ]
        for flag, value, needed, needs in ignored:
            if value is not None and not needed:
                raise BadValue(f"{flag}: " + without.format(needs, flag))
        if self.alpha != 0.8 and not (self.clap and self.fleur_url):
            raise BadValue(
                "--alpha: S_CAF needs both --clap and --fleur-url, so without them it would be "
                "ignored; drop --alpha or add them"
            )
        for flag, url in (("--eval-judge-url", self.judge_url), ("--fleur-url", self.fleur_url)):
            if url is not None:
                check_url(url, flag)


def _ties(
    scores: Mapping[Key, float | None], samples: Sequence[Sample], decimals: int | None
) -> dict[str, Any]:
    from stylebench.metrics.captions.caf import tie_rate

    a, b = [], []
    for s in samples:
        for x, y in PAIRS:
            va, vb = scores.get((s.id, x)), scores.get((s.id, y))
            if va is not None and vb is not None:
                a.append(va)
                b.append(vb)
    return {"n_pairs": len(a), "tie_rate": tie_rate(a, b, decimals)}


def evaluate(run_dir: str | Path, opts: EvalOptions) -> dict[str, Any]:
    from stylebench.commands.runs import open_stored, score_stored

    scored = score_stored(open_stored(run_dir), only=("caption",))  # no judge needed
    caps = {k: c for k, c in scored.records.of(CAPTIONS).items() if c.status == "ok"}
    if not caps:
        raise BadValue(f"{run_dir} has no ok captions: run it with --captioner first")
    cfg = scored.cfg
    by_id = {s.id: s for s in scored.samples}
    out: dict[str, Any] = {
        "run": str(scored.root),
        "captioner": (scored.measured.info.get("caption") or {}).get("captioner"),
        "n_captions": len(caps),
    }
    if cfg.caption.captioner == "features":
        from stylebench.scoring.captions import CIRCULAR_NOTE

        out["circular"] = (
            CIRCULAR_NOTE  # its captions restate the measurements it is scored against
        )
    if opts.speakers:
        from stylebench.metrics.captions.speaker import ENCODER_LABEL, consistency, embed_captions

        keys = sorted(caps)
        voices = [by_id[k[0]].voice for k in keys]
        if len(set(voices)) >= 2:
            emb = embed_captions([caps[k].text for k in keys])
            out["speaker_consistency"] = {
                **consistency(emb, voices, seed=cfg.decode.seed),
                "encoder": ENCODER_LABEL,
                "speaker": "the dialogue's voice (what the calibration rows speak in)",
            }
        else:
            out["speaker_consistency"] = {
                "skipped": "fewer than two voices among the captioned replies"
            }
    if opts.judge_url:
        from stylebench.metrics.captions.base import load_instruction
        from stylebench.metrics.captions.sic import SicJudge, reply_metadata, summarise

        j = SicJudge(opts.judge_model, opts.judge_url)
        vals = scored.dim_values
        keys = sorted(caps)
        metas = [
            (
                reply_metadata(by_id[k[0]], k[1], vals.get(k, {}), vals.get((k[0], 1), {})),
                caps[k].text,
            )
            for k in keys
        ]
        ins = {
            d: load_instruction(d, cfg.caption.caption_prompt).text
            for d in {by_id[k[0]].dim for k in keys}
        }
        ifa = [({"instruction": ins[by_id[k[0]].dim]}, caps[k].text) for k in keys]
        out["styleinstructcaps"] = {
            "judge": j.describe(),
            "meta": summarise(j.judge_task("meta", metas)),
            "hallucination": summarise(j.judge_task("hallucination", metas)),
            "ifa": summarise(j.judge_task("ifa", ifa)),
        }
    out.update(_caf(scored, caps, opts))
    (scored.root / "caption_eval.json").write_text(
        json.dumps(out, indent=2, ensure_ascii=False, default=str), encoding="utf-8"
    )
    return out


def _caf(scored: ScoredRun, caps: Mapping[Key, CaptionRecord], opts: EvalOptions) -> dict[str, Any]:
    from stylebench.metrics.captions.caf import caf_score
    from stylebench.metrics.judges.base import JudgeError

    if not (opts.fleur_url or opts.clap):
        return {}
    keys = sorted(caps)
    audio = {k: scored.root / scored.replies[k].audio for k in keys}
    per: dict[Key, dict[str, Any]] = {k: {} for k in keys}
    block: dict[str, Any] = {"alpha": opts.alpha}
    if opts.clap:
        from stylebench.metrics.captions.clap import ClapScorer

        clap = ClapScorer(opts.clap)
        block["s_clap"] = {
            **clap.describe(),
            "mode": opts.clap_mode,
            "label": "paper's equation (max over window cosines)"
            if opts.clap_mode == "max_cosine"
            else "compatibility mode: max-pooled window embeddings (our reading of the released code)",
        }
        for k in keys:
            per[k]["s_clap"] = clap.s_clap(audio[k], caps[k].text, opts.clap_mode)
    if opts.fleur_url:
        from stylebench.metrics.captions.openai_api import OpenAIFleur

        f = OpenAIFleur(opts.fleur_model, opts.fleur_url)
        block["fleur"] = {k: v for k, v in f.describe().items() if k != "prompts"}
        for k in keys:
            try:
                r = f.score(audio[k], caps[k].text)
                per[k].update(fleur=r["fleur"], raw_score=r["raw_score"])
            except (JudgeError, ValueError) as exc:
                per[k]["fleur_error"] = str(exc)[:300]
        ok = [k for k in keys if "fleur" in per[k]]
        block["fleur_n_ok"], block["fleur_n"] = len(ok), len(keys)
        block["ties"] = {
            "raw_score": _ties({k: per[k].get("raw_score") for k in ok}, scored.samples, None),
            "fleur": _ties({k: per[k].get("fleur") for k in ok}, scored.samples, None),
        }
    for k in keys:
        if "s_clap" in per[k] and "fleur" in per[k]:
            per[k]["s_caf"] = caf_score(per[k]["s_clap"], per[k]["fleur"], opts.alpha)
    block["per_caption"] = [{"sample_id": k[0], "turn": k[1], **v} for k, v in per.items()]
    return {"caf": block}
