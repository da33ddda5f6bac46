"""``stylebench models``: the model wrappers and whether they can run here."""

from __future__ import annotations

import argparse

HELP = "list model wrappers and whether they can run here"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--worker-python", metavar="PYTHON", help="check inside that environment")


def main(args: argparse.Namespace) -> int:
    from stylebench.model_wrappers.registry import MODELS, model_status

    if args.worker_python:
        from stylebench.model_wrappers.worker import worker_statuses

        statuses = worker_statuses(args.worker_python)
    else:
        statuses = {name: model_status(name) for name in MODELS}
    for name, (status, detail) in statuses.items():
        print(f"{name:<20} {status:<18} {detail}")
    return 0
