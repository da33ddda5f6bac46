"""The model-wrapper interfaces.

A real wrapper is one class with one required method, :meth:`SpeechModel.respond`. It never sees
dataset, task or split ids, nor the dialogue's answer key. Replies are wav files on disk (see
:func:`stylebench.model_wrappers.common.scratch_wav`); the runner moves them into the run folder
and records their checksum.

The embedded calibration models (``reference``, ``neutral``, ``shuffled``) are the one exception:
they must know what they are asked to say, so they implement :class:`ScriptedModel` instead and
receive a :class:`Script`. The runner hands one over only to a ``ScriptedModel``; the worker
protocol has no field for it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stylebench.records import DecodeConfig, Turn

__all__ = ["DecodeConfig", "Script", "ScriptedModel", "SpeechModel", "Turn"]


class SpeechModel(ABC):
    """Base class of every speech-to-speech model wrapper."""

    #: registry name, set by each subclass
    name: str = ""

    @abstractmethod
    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        """Answer ``user_turn`` given the conversation so far.

        Args:
            history: earlier turns, alternating user and assistant, oldest first. Assistant turns
                are this model's own earlier replies (text and audio).
            user_turn: the new spoken request (``audio`` is a wav path; ``text`` its transcript).
            decode: decoding settings.

        Returns:
            An assistant :class:`Turn` whose ``audio`` is a wav file the caller may move.
        """

    def describe(self) -> dict[str, Any]:
        """What identifies this model's answers: name, checkpoint or revision, settings.

        It goes into the run manifest and into every response cache key.
        """
        return {"name": self.name}

    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any] | None:
        """What this model's decoder is given for the run's ``decode`` (its own argument names).

        Recorded in the manifest as ``model.decode_effective``; None when a wrapper does not
        say. Must not run the model.
        """
        return None


@dataclass(frozen=True)
class Script:
    """What an embedded calibration model must say in one turn (the dialogue's answer key)."""

    content: str
    dim: str
    direction: str
    lang: str
    emotion: str
    turn: int
    #: the dialogue's protocol: ``stylebench`` (style asked at turns 2 and 3) or ``persistence``
    #: (style asked once at turn 1, or, in the control dialogue, never)
    protocol: str = "stylebench"
    #: False in a persistence control dialogue: no style was asked for
    instructed: bool = True


class ScriptedModel(ABC):
    """Embedded calibration models (reference, neutral, shuffled): they read the answer key.

    Only these may; the runner hands the Script to a model only when
    ``isinstance(model, ScriptedModel)``. Real wrappers subclass SpeechModel and never see it;
    workers never carry it.
    """

    #: registry name, set by each subclass
    name: str = ""

    @abstractmethod
    def respond_scripted(
        self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig, script: Script
    ) -> Turn:
        """Answer ``user_turn`` as ``script`` says (arguments otherwise as
        :meth:`SpeechModel.respond`)."""

    def describe(self) -> dict[str, Any]:
        """What identifies this model's answers (see :meth:`SpeechModel.describe`)."""
        return {"name": self.name}
