"""``stylebench models``: the model wrappers and whether they can run here."""

from __future__ import annotations

from typing import Any

from stylebench.cli.common import Args, option

HELP = "list model wrappers and whether they can run here"


def params() -> list[Any]:
    return [option("--worker-python", metavar="PYTHON", help="check inside that environment")]


def main(args: Args) -> int:
    from stylebench.model_wrappers.registry import MODELS, model_status

    if args.worker_python:
        from stylebench.model_wrappers.worker import worker_statuses

        statuses = worker_statuses(args.worker_python)
    else:
        statuses = {name: model_status(name) for name in MODELS}
    for name, (status, detail) in statuses.items():
        print(f"{name:<20} {status:<18} {detail}")
    return 0
