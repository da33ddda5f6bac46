"""``build-dialogues --executor ray`` on a local Ray (2 CPUs): the actors synthesise and check,
the driver writes, and the set is the serial build's, a voice move included; a build cut short
in this process is finished on Ray."""

from __future__ import annotations

import io
import sys

import pytest
from standins import texttone
from standins.texttone import ReadsTextTone, TextTone
from test_build_resume import SPEC, VOICES, files_of

from stylebench.dialogues.builder import build_set, plan_samples
from stylebench.dialogues.intelligibility import Checker
from stylebench.executors.config import ExecutorConfig
from stylebench.pipeline.progress import reporter

ray = pytest.importorskip("ray")

RAY = ExecutorConfig(executor="ray", workers=2)


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    # the workers cannot import the tests' stand-ins: they travel by value
    for mod in (texttone, sys.modules[__name__]):
        ray.cloudpickle.register_pickle_by_value(mod)
    from stylebench.executors.ray_executor import LOCAL_RAY_SYSTEM_CONFIG

    # as the executor starts a local Ray: workers at the driver's priority (Ray's default,
    # niceness 15, let a loaded machine stall the dying-worker test for many minutes)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _system_config=LOCAL_RAY_SYSTEM_CONFIG,
    )
    yield
    ray.shutdown()


def checker() -> Checker:
    """Reads every turn but the first sample's second one in its planned voice (moved on)."""
    plan = plan_samples(SPEC, VOICES)[0]
    return Checker(ReadsTextTone(garble=plan["texts"][1], voice=plan["voice"]), quality=False)


def test_a_ray_build_is_the_serial_build(tmp_path):
    serial, on_ray = tmp_path / "serial", tmp_path / "ray"
    build_set(serial, SPEC, TextTone(), VOICES, jobs=1, checker=checker())
    card = build_set(
        on_ray, SPEC, TextTone(), VOICES, checker=checker(), executor=RAY, synth_factory=TextTone
    )
    assert files_of(on_ray) == files_of(serial)
    assert card["intelligibility"]["per_voice"]["en-f1"]["n_revoiced"] == 3


def test_a_build_cut_short_here_is_finished_on_ray(tmp_path):
    out, serial = tmp_path / "set", tmp_path / "serial"
    build_set(serial, SPEC, TextTone(), VOICES, jobs=1, checker=checker())
    with pytest.raises(KeyboardInterrupt):
        build_set(out, SPEC, TextTone(stop_after=5), VOICES, jobs=1, checker=checker())
    log = io.StringIO()
    build_set(
        out,
        SPEC,
        TextTone(),
        VOICES,
        checker=checker(),
        executor=RAY,
        synth_factory=TextTone,
        progress=reporter(log),
    )
    lines = log.getvalue().splitlines()
    # five syntheses made the first sample's three turns (its second one three times)
    assert lines[0] == "turns: 3/12 turns (3 done before)"  # the planned voices' round
    assert lines[1].startswith("turns: 12/12 turns, 9 computed in ")
    assert lines[2] == "turns: 0/3 turns"  # the first sample again, in the next voice
    assert files_of(out) == files_of(serial)


def test_ray_needs_a_synthesiser_each_actor_can_build(tmp_path):
    with pytest.raises(ValueError, match="synth_factory"):
        build_set(tmp_path / "s", SPEC, TextTone(), VOICES, executor=RAY)
