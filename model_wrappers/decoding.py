"""What the run's decode settings mean, defined once: ``--temperature 0`` is greedy decoding.

Greedy means the most probable next token at every step of the model's *text* stream (the part
the run's settings control). Each model's decoder takes different arguments, and passing
``temperature=0`` literally breaks several of them (a division by zero, or transformers refusing
``do_sample=True`` with temperature 0), so every wrapper maps the definition onto the arguments
its own code accepts (:func:`run_settings`): a ``greedy`` set of arguments for temperature 0, a
``sampled`` set (plus the run's temperature and top_p) above it. The effective arguments are
recorded in each reply's ``raw.sampling`` and in the manifest (``model.decode_effective``).
Speech-token streams that the model samples on its own (talkers, audio heads, flow decoders)
keep the model's settings; each wrapper's ``describe()`` says which do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stylebench.records import DecodeConfig

#: a value in a greedy/sampled mapping that removes the argument (so the model's default holds)
DROP = "<drop>"
GREEDY_FIELDS = ("temperature", "top_p")  # run fields that have no meaning under greedy decoding


def is_greedy(decode: DecodeConfig) -> bool:
    """The one definition: a temperature of 0 (or below) asks for greedy decoding."""
    return float(decode.temperature) <= 0.0


def run_settings(
    official: Mapping[str, Any],
    run_mapping: Mapping[str, str],
    decode: DecodeConfig,
    *,
    greedy: Mapping[str, Any],
    sampled: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A model's arguments for the run's settings (``sampling=run``).

    Start from the model's ``official`` arguments; write the run's fields named in
    ``run_mapping`` (DecodeConfig field -> the model's argument) over them, except temperature
    and top_p when greedy; then apply ``greedy`` or ``sampled``. A :data:`DROP` value removes
    the argument.
    """
    out = dict(official)
    greedy_now = is_greedy(decode)
    for field_name, arg in run_mapping.items():
        if greedy_now and field_name in GREEDY_FIELDS:
            continue
        out[arg] = getattr(decode, field_name)
    out.update(greedy if greedy_now else (sampled or {}))
    return {k: v for k, v in out.items() if v != DROP}


def manifest_entry(settings: Mapping[str, Any] | None, decode: DecodeConfig) -> dict[str, Any]:
    """``model.decode_effective``: what the text decoder was given, and what that means."""
    return {
        "greedy": is_greedy(decode),
        "args": None if settings is None else dict(settings),
        "definition": "temperature 0 = greedy (argmax) decoding of the text stream",
    }


def decode_entry(model: Any, decode: DecodeConfig) -> dict[str, Any]:
    """:func:`manifest_entry` for a loaded model (one without ``decode_settings`` says None)."""
    ask = getattr(model, "decode_settings", None)
    return manifest_entry(ask(decode) if callable(ask) else None, decode)
