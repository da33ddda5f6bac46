"""`make setup` can be watched: the set builder tells a progress object each stage's turns, and
scripts/setup_models.py shows them (a bar on a terminal, lines in a log) and logs each stage."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

from test_piper_default import ScriptedASR, SpeakTextAsTone, _build

from stylebench.dialogues.builder import build_set
from stylebench.dialogues.intelligibility import Checker

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "setup_models.py"


class Recorded:
    """A progress object that keeps what it was told: [name, total, unit, done, updates, closed]."""

    def __init__(self) -> None:
        self.stages: list[list] = []

    def bar(self, name: str, total: int, unit: str, done: int = 0) -> Recorded:
        self.stages.append([name, total, unit, done, [], False])
        return self

    def update(self, n: int = 1) -> None:
        self.stages[-1][4].append(n)

    def close(self) -> None:
        self.stages[-1][5] = True


def setup_models():
    spec = importlib.util.spec_from_file_location("setup_models", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_builder_reports_every_turn_of_each_stage(tmp_path):
    out, spec, _, voices, target = _build(tmp_path, None)
    shown = Recorded()
    asr = ScriptedASR(target, garble=1)  # one turn synthesised again: still counted once
    build_set(
        out, spec, SpeakTextAsTone(), voices, checker=Checker(asr, quality=False), progress=shown
    )
    assert shown.stages, "the build showed no progress"
    for name, total, unit, done, updates, closed in shown.stages:
        assert (total, unit, closed) == (6, "turn", True), name  # 2 samples x 3 turns
        assert done + sum(updates) == total, name


def test_setup_shows_lines_in_a_log_and_logs_each_stage(tmp_path):
    mod = setup_models()
    out, shown = io.StringIO(), io.StringIO()  # not terminals: lines, not a bar
    log = mod.SetupLog(tmp_path / "setup.log", echo=out)
    stage = mod.SetupProgress(log, every_s=0.0, stream=shown).bar("turns", 6, "turn")
    for _ in range(3):
        stage.update(2)
    stage.close()
    lines = shown.getvalue().splitlines()
    assert lines[0] == "turns: 0/6 turns"
    assert lines[1].startswith("turns: 2/6 turns (33.3%), ") and "left" in lines[1]
    assert lines[-1].startswith("turns: 6/6 turns, 6 computed in ")
    logged = (tmp_path / "setup.log").read_text().splitlines()
    assert len(logged) == 2  # the stage's start and its end, each with the time
    assert logged[0].endswith("default set, turns: 6 turns to do")
    assert "default set, turns: 6/6 turns in" in logged[1]
    assert out.getvalue() == ""  # the log's lines are not printed twice
