"""``forgetful``: the persistence protocol's decay row. It follows a style request for the
turn that carries it and forgets it afterwards.

Same voices, content and step sizes as ``reference`` (one step of the dimension's own size, well
above its threshold). In a persistence dialogue (docs/persistence.md) the style is asked for at
turn 1: forgetful speaks turn 1 one step away from neutral and every later turn neutrally; the
control dialogue, which asks for nothing, is neutral throughout. Its persistence should be near
100% at turn 1 and near 0% from turn 2, the drop the decay curve must show.

In a StyleBench dialogue, where turns 2 and 3 each ask for a further change, it applies only
the request of the turn in front of it: turns 2 and 3 are both one step from neutral, so the
change 1-2 is followed and the change 2-3 is not (the step of turn 2 was forgotten).
"""

from __future__ import annotations

from collections.abc import Sequence

from stylebench.model_wrappers.base import Script
from stylebench.model_wrappers.embedded.tts import TTSModel, replies_so_far, step_style
from stylebench.records import DecodeConfig, Turn


class ForgetfulModel(TTSModel):
    """Decay calibration: a style request is followed on its own turn only, then forgotten."""

    name = "forgetful"
    revision = "1"

    def respond_scripted(
        self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig, script: Script
    ) -> Turn:
        k = replies_so_far(history) + 1  # this reply's turn, 1-based
        if script.protocol == "persistence":
            asked_now = script.instructed and k == 1
        else:  # StyleBench asks at turns 2 and 3
            asked_now = k >= 2
        style = step_style(script.dim, script.direction, int(asked_now), emotion=script.emotion)
        return self.speak(script.content, script.lang, style)
