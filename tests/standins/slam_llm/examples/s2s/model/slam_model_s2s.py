"""Stand-in for examples/s2s/model/slam_model_s2s.py: ``model_factory`` returning a stand-in."""

from __future__ import annotations

CALLS: list[tuple] = []


class StandInSlamModel:
    def to(self, device):
        CALLS.append(("to", device))
        return self

    def eval(self):
        CALLS.append(("eval",))
        return self


def model_factory(train_config, model_config, **kwargs):
    CALLS.append(("model_factory", kwargs.get("ckpt_path")))
    return StandInSlamModel(), object()
