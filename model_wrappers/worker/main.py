"""The model worker: ``python -m stylebench.model_wrappers.worker.main``, run by the runner.

It serves one real model (never an embedded calibration model, which reads the dialogue's
answer key and runs in process only) over the protocol in :mod:`.protocol`: requests arrive on stdin,
answers leave on stdout. Before anything else is imported it moves those two pipes to private
file descriptors and points fd 0 at /dev/null and fd 1 at stderr, so whatever a model library
prints (from Python or from C) lands in the worker log instead of corrupting the protocol.

``--status`` instead prints ``{name: [status, detail]}`` for every registered model, as seen
from this environment (``stylebench models --worker-python ...`` uses it).
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

from stylebench.errors import BadValue


def _claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """Private copies of stdin/stdout for the protocol; fds 0 and 1 become harmless."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto_in, proto_out


def load_model_class(spec: str) -> Any:
    """A registry name, or ``module:Class`` for a wrapper outside the registry.

    Raises:
        ValueError: the class is an embedded calibration model (a ``ScriptedModel``): it needs
            the dialogue's answer key, which never crosses the worker protocol.
    """
    from stylebench.model_wrappers.base import ScriptedModel

    if ":" in spec:
        import importlib

        module_name, attr = spec.split(":", 1)
        cls = getattr(importlib.import_module(module_name), attr)
    else:
        from stylebench.model_wrappers.registry import MODELS

        cls = MODELS.load(spec)
    if isinstance(cls, type) and issubclass(cls, ScriptedModel):
        raise BadValue(
            f"{spec} is an embedded calibration model: embedded calibration models run in "
            "process only (drop --worker-python)"
        )
    return cls


def _error(exc: BaseException) -> Any:
    import traceback

    from stylebench.model_wrappers.worker.protocol import Error

    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return Error(type(exc).__name__, str(exc), tb)


def serve(proto_in: IO[bytes], proto_out: IO[bytes]) -> int:
    """Answer ``Init`` then ``Respond`` messages until ``Shutdown`` or end of input."""
    import platform

    import stylebench.model_wrappers.worker.protocol as wp
    from stylebench import __version__

    def send(msg: Any) -> None:
        proto_out.write(wp.encode(msg))
        proto_out.flush()

    first = proto_in.readline()
    if not first:
        return 0
    try:
        init = wp.decode(first)
    except ValueError as exc:
        send(wp.Error("ProtocolError", str(exc)))
        return 2
    if not isinstance(init, wp.Init):
        send(wp.Error("ProtocolError", f"expected init, got {type(init).__name__}"))
        return 2
    if init.protocol != wp.PROTOCOL_VERSION:
        send(
            wp.Error(
                "ProtocolError",
                f"runner speaks worker protocol {init.protocol}, this worker "
                f"{wp.PROTOCOL_VERSION}: install the same stylebench in both environments",
            )
        )
        return 2
    try:
        from stylebench.model_wrappers.common import build_model

        model = build_model(load_model_class(init.model), dict(init.model_args), init.model)
        describe = model.describe()
    except Exception as exc:
        send(_error(exc))
        return 1
    send(wp.Ready(describe, os.getpid(), sys.executable, platform.python_version(), __version__))
    print(f"[worker] ready: {init.model} pid={os.getpid()}", file=sys.stderr, flush=True)
    for line in iter(proto_in.readline, b""):
        try:
            msg = wp.decode(line)
        except ValueError as exc:  # answered, not fatal: the runner sees why and the model stays
            send(wp.Error("ProtocolError", str(exc)))
            continue
        if isinstance(msg, wp.Shutdown):
            break
        if isinstance(msg, wp.Settings):
            try:
                send(wp.Settled(model.decode_settings(msg.decode)))
            except Exception as exc:
                send(_error(exc))
            continue
        if not isinstance(msg, wp.Respond):
            send(wp.Error("ProtocolError", f"expected respond, got {type(msg).__name__}"))
            continue
        try:
            turn = model.respond(msg.history, msg.user_turn, msg.decode)
        except Exception as exc:  # the model failed on this turn; the worker stays up
            send(_error(exc))
            continue
        try:
            send(wp.Reply(turn))
        except (TypeError, ValueError) as exc:  # a reply the protocol cannot carry
            send(_error(exc))
    return 0


def print_status(out: IO[bytes]) -> int:
    """Write ``{name: [status, detail]}`` for every registered model as one JSON line."""
    import json

    from stylebench.model_wrappers.registry import MODELS, model_status

    statuses = {name: list(model_status(name)) for name in MODELS}
    out.write((json.dumps(statuses) + "\n").encode("utf-8"))
    out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--status"]):
        print("usage: python -m stylebench.model_wrappers.worker.main [--status]", file=sys.stderr)
        return 2
    proto_in, proto_out = _claim_stdio()
    if args == ["--status"]:
        return print_status(proto_out)
    return serve(proto_in, proto_out)


if __name__ == "__main__":
    sys.exit(main())
