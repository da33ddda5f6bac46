"""``stylebench caption-eval RUN``: judge a run's captioner (StyleInstructCaps metrics, CAF-Score)."""

from __future__ import annotations

import argparse
import json

HELP = "evaluate a run's captions: speaker consistency, meta/hallucination/IFA, S-CLAP/FLEUR/CAF"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir")
    parser.add_argument(
        "--eval-judge-url", help="OpenAI-compatible URL of the meta/hallucination/IFA judge"
    )
    parser.add_argument("--eval-judge-model", help="its served model name")
    parser.add_argument(
        "--fleur-url", help="OpenAI-compatible URL of an audio LLM that returns logprobs"
    )
    parser.add_argument("--fleur-model", help="its served model name")
    parser.add_argument("--clap", help="CLAP folder or hub id (transformers ClapModel)")
    parser.add_argument(
        "--clap-mode",
        choices=("max_cosine", "max_embedding"),
        default="max_cosine",
        help="max_cosine: the paper's equation; max_embedding: the released code's max-pooled embeddings",
    )
    parser.add_argument(
        "--alpha", type=float, default=0.8, help="S_CAF = alpha*S-CLAP + (1-alpha)*FLEUR"
    )
    parser.add_argument(
        "--no-speakers", action="store_true", help="skip speaker-caption consistency"
    )


def main(args: argparse.Namespace) -> int:
    from stylebench.pipeline.caption_eval import EvalOptions, evaluate

    opts = EvalOptions(
        args.eval_judge_url,
        args.eval_judge_model,
        args.fleur_url,
        args.fleur_model,
        args.clap,
        args.clap_mode,
        args.alpha,
        not args.no_speakers,
    )
    out = evaluate(args.run_dir, opts)
    summary = {k: v for k, v in out.items() if k != "caf"}
    if "caf" in out:
        summary["caf"] = {k: v for k, v in out["caf"].items() if k != "per_caption"}
    print(json.dumps(summary, indent=2, ensure_ascii=False, default=str))
    return 0
