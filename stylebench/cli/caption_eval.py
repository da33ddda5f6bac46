"""``stylebench caption-eval RUN``: judge a run's captioner (StyleInstructCaps metrics, CAF-Score)."""

from __future__ import annotations

import json
from typing import Any

import click

from stylebench.cli.common import Args, argument, option

HELP = "evaluate a run's captions: speaker consistency, meta/hallucination/IFA, S-CLAP/FLEUR/CAF"


def params() -> list[Any]:
    return [
        argument("run_dir"),
        option(
            "--eval-judge-url", help="OpenAI-compatible URL of the meta/hallucination/IFA judge"
        ),
        option("--eval-judge-model", help="its served model name"),
        option("--fleur-url", help="OpenAI-compatible URL of an audio LLM that returns logprobs"),
        option("--fleur-model", help="its served model name"),
        option("--clap", help="CLAP folder or hub id (transformers ClapModel)"),
        option(
            "--clap-mode",
            type=click.Choice(("max_cosine", "max_embedding")),
            default="max_cosine",
            help="max_cosine: the paper's equation; max_embedding: the released code's max-pooled "
            "embeddings",
        ),
        option("--alpha", type=float, default=0.8, help="S_CAF = alpha*S-CLAP + (1-alpha)*FLEUR"),
        option("--no-speakers", is_flag=True, help="skip speaker-caption consistency"),
    ]


def main(args: Args) -> int:
    from stylebench.commands.caption_eval import EvalOptions, evaluate

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
