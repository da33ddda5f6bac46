"""The model-wrapper interface.

A wrapper is one class with one required method, :meth:`SpeechModel.respond`. It never sees
dataset, task or split ids. Replies are wav files on disk (see :func:`_common.scratch_wav`); the
runner moves them into the run folder and records their checksum.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from stylebench.records import DecodeConfig, Turn

__all__ = ["DecodeConfig", "SpeechModel", "Turn"]


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
