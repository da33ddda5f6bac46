"""ASR backends behind one small interface: ``transcribe(wave, sr, lang) -> Transcript``.

Decoding is deterministic: the same audio and settings give the same transcript, every time.
Whisper's usual temperature fallback re-samples a failed segment at rising temperatures, and that
sampling is not reproducible (measured: 2-3 different transcripts of one noisy clip in 3 calls,
with or without ``ctranslate2.set_random_seed``), so it is not used. Instead a first greedy pass
at temperature 0 is followed, when it loops or is unsure, by one deterministic re-decode: beam
search (5 beams) with an n-gram ban, still at temperature 0.

Whisper can loop or hallucinate (Whisper base loops on synthetic Mandarin), so every transcript
carries flags: ``asr_repetition`` (a loop), ``asr_empty``, ``asr_low_confidence`` (a segment's
average log-probability below -1.0) and ``asr_redecoded`` (the re-decode replaced the first
pass). Flags go into the records.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.metrics.asr.offline import (
    OFFLINE_MODELS,
    check_asr_model,
    missing_extra,
    resolve_offline_model,
)
from stylebench.metrics.asr.transcript import (
    COMPRESSION_RATIO_LIMIT,
    LOW_LOGPROB,
    RETRY_BEAM_SIZE,
    RETRY_NO_REPEAT_NGRAM,
    TEMPERATURES,
    Transcript,
    check_lang,
    make_transcript,
    to_16k,
    with_language,
)
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="asr",
    version="7",
    outputs=(
        "text",
        "lang",
        "words",
        "flags",
        "backend",
        "model",
        "spoken_lang",
        "spoken_lang_p",
        "declared_lang_p",
        "mean_logprob",
        "unsure_word_share",
        "unsure_stretch_share",
    ),
    needs=("audio",),
    description=(
        "Whisper transcript with word timestamps, language fixed (en/zh), deterministic: greedy "
        "at temperature 0, and for a looping or low-confidence first pass one re-decode by beam "
        "search (5) with a 3-gram ban at temperature 0 (no sampled fallback); not conditioned on "
        "previous text; English numerals suppressed (numbers come out as words, so syllables "
        "are what was said, not '1,001' for 'one zero zero one'); offline default Whisper base "
        "(faster-whisper int8 on CPU), paper setting Whisper-large-v3. Flags loops, empty output "
        "and low confidence. Also records the language Whisper hears (its language ID on the "
        "encoder output of the first pass's first 30 s window) and the probability it gives the "
        "declared language."
    ),
)


class FasterWhisperASR:
    """Whisper through faster-whisper (CTranslate2); the offline default.

    Args:
        model: a local model folder, an offline name (``"base"``, ``"tiny.en"``, see
            :func:`resolve_offline_model`), or a hub name such as ``"large-v3"``.
        device: ``"cpu"``, ``"cuda"`` or ``"auto"``.
        compute_type: CTranslate2 compute type, e.g. ``"int8"`` on CPU, ``"float16"`` on GPU.
        cpu_threads: CPU threads of each worker (0 lets CTranslate2 choose).
        workers: replies that can be decoded at once, from as many Python threads
            (CTranslate2's ``num_workers``: one model replica each). Each reply is still decoded
            alone, so the transcript is the one a single worker makes (docs/scale.md, "Faster
            offline ASR"); :attr:`concurrency` tells a caller how many threads to use.
        beam_size: beams of the first pass (1 = greedy); always at temperature 0.
        cache_dir: cache root for joining ``"base"`` (default ``$STYLEBENCH_CACHE``).
        language_id: run Whisper's language ID on every transcript (the ``spoken_lang`` fields),
            on the encoder output the first pass computed for its first 30 s window (no encoder
            pass of its own, :meth:`_identify`); False leaves them empty, for a caller that
            fixes the language and never reads them (the dialogue set's intelligibility check).
    """

    backend = "faster-whisper"

    def __init__(
        self,
        model: str = "base",
        *,
        device: str = "cpu",
        compute_type: str = "int8",
        cpu_threads: int = 0,
        workers: int = 1,
        beam_size: int = 1,
        cache_dir: Path | None = None,
        language_id: bool = True,
    ) -> None:
        if beam_size < 1 or cpu_threads < 0 or workers < 1:
            raise ValueError("beam_size and workers must be >= 1 and cpu_threads >= 0")
        self.model = model
        self.name = f"{self.backend}:{model}"
        self.device, self.compute_type = device, compute_type
        self.cpu_threads, self.beam_size, self.cache_dir = cpu_threads, beam_size, cache_dir
        self.concurrency = workers
        self.english_only = model.endswith(".en")
        self.language_id = language_id
        self._model: Any = None
        self._suppress: list[int] = []
        self._loading = threading.Lock()
        self._window = _FirstWindow()

    def _load(self) -> Any:
        with self._loading:  # the first calls may come from several threads at once
            return self._model if self._model is not None else self._build_model()

    def _build_model(self) -> Any:
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise missing_extra("asr", "faster-whisper") from exc
        if self.model in OFFLINE_MODELS:
            source = str(resolve_offline_model(self.model, self.cache_dir))
        else:  # a folder, or a hub name (faster-whisper's cache or a download)
            source = str(Path(check_asr_model(self.backend, self.model)).expanduser())
        self._model = WhisperModel(
            source,
            device=self.device,
            compute_type=self.compute_type,
            cpu_threads=self.cpu_threads,
            num_workers=self.concurrency,
        )
        tok = getattr(self._model, "hf_tokenizer", None)
        if tok is not None:
            self._suppress = numeral_tokens(tok.get_vocab_size(), lambda i: tok.decode([i]))
        self._model.encode = self._window.wrap(self._model.encode)
        return self._model

    def _options(self, lang: str, *, retry: bool) -> dict[str, Any]:
        options: dict[str, Any] = {
            "language": lang,
            "task": "transcribe",
            "beam_size": max(self.beam_size, RETRY_BEAM_SIZE) if retry else self.beam_size,
            "temperature": list(TEMPERATURES),
            "compression_ratio_threshold": COMPRESSION_RATIO_LIMIT,
            "log_prob_threshold": LOW_LOGPROB,
            "no_speech_threshold": 0.6,
            "condition_on_previous_text": False,
            "word_timestamps": True,
            "vad_filter": False,  # timestamps stay in file time; our VAD runs separately
            "hallucination_silence_threshold": 2.0,
        }
        if retry:
            options["no_repeat_ngram_size"] = RETRY_NO_REPEAT_NGRAM
        if self._suppress and lang in SUPPRESS_NUMERALS:
            options["suppress_tokens"] = [-1, *self._suppress]
        return options

    def _decode(self, audio: np.ndarray, lang: str, *, retry: bool) -> list[Any]:
        model = self._load()
        options = self._options(lang, retry=retry)
        params = inspect.signature(model.transcribe).parameters.values()
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            names = {p.name for p in params}  # older faster-whisper: drop options it lacks
            options = {k: v for k, v in options.items() if k in names}
        segments, _info = model.transcribe(audio, **options)
        return list(segments)

    def _build(self, segments: list[Any], lang: str, extra: tuple[str, ...]) -> Transcript:
        return make_transcript(
            (s.text for s in segments),
            ((w.word, w.start, w.end, w.probability) for s in segments for w in (s.words or [])),
            ((s.avg_logprob, s.end - s.start) for s in segments),
            lang=lang,
            backend=self.backend,
            model=self.model,
            extra_flags=extra,
        )

    def transcribe(self, wave: np.ndarray, sr: int, lang: str) -> Transcript:
        """Transcribe one reply; a looping or low-confidence first pass is re-decoded once.

        The re-decode (beam search with an n-gram ban) replaces the first pass when it neither
        loops nor comes back empty; both passes are deterministic.

        Raises:
            ValueError: bad audio, an unsupported language, or zh with an English-only model.
            ImportError: faster-whisper is not installed.
        """
        self._check(lang)
        audio = to_16k(wave, sr)
        with self._window.kept():
            tr = self._ladder(audio, lang, None)
            return self._identify(audio, tr, self._window.output)

    def _identify(self, audio: np.ndarray, tr: Transcript, encoded: Any = None) -> Transcript:
        """``tr`` with the language Whisper hears in the first 30 s (its own language ID): a
        transcript forced into the declared language may be a translation of speech in another
        one (docs/metrics.md, "Unscored replies").

        ``encoded`` is the encoder output of the first pass's first window, which the language
        ID reads instead of encoding the audio again (half of a short clip's encoder time). It
        differs from faster-whisper's ``detect_language(audio)`` input by one frame: the
        transcription leaves out the feature extractor's padding frame and pads with zeros
        (docs/metrics.md, "Language ID"). Without it (a batched first pass) the audio is
        encoded again as ``detect_language`` does."""
        if self.english_only or not self.language_id:  # no language tokens, or not asked for
            return tr
        if encoded is None:
            _top, _p, probs = self._load().detect_language(audio=audio)
        else:
            found = self._load().model.detect_language(encoded)[0]
            probs = [(token[2:-2], p) for token, p in found]
        return with_language(tr, probs)

    def _ladder(self, audio: np.ndarray, lang: str, first: list[Any] | None) -> Transcript:
        """The decoding ladder; ``first`` is the first pass when it was decoded already."""

        def decode(retry: bool) -> Transcript:
            segs = (
                first if first is not None and not retry else self._decode(audio, lang, retry=retry)
            )
            return self._build(segs, lang, ("asr_redecoded",) if retry else ())

        return redecode_if_needed(decode)

    def transcribe_batch(
        self, items: list[tuple[np.ndarray, int, str]], batch_size: int
    ) -> list[Transcript]:
        """Transcribe many replies, first passes ``batch_size`` at a time (:mod:`.batched`, which
        says where that differs from :meth:`transcribe`); replies over 30 s go one by one.

        Raises:
            ValueError: as :meth:`transcribe`, for the first bad item.
        """
        from stylebench.metrics.asr.batched import WINDOW_S, first_pass

        for _, _, lang in items:
            self._check(lang)
        audios = [to_16k(w, sr) for w, sr, _ in items]
        out: list[Transcript | None] = [None] * len(items)
        for lang in dict.fromkeys(lang for _, _, lang in items):
            idx = [
                i
                for i, it in enumerate(items)
                if it[2] == lang and len(audios[i]) <= WINDOW_S * 16000
            ]
            firsts = (
                first_pass(
                    self._load(),
                    [audios[i] for i in idx],
                    lang,
                    self._options(lang, retry=False),
                    batch_size,
                )
                if idx
                else []
            )
            for i, segs in zip(idx, firsts, strict=True):
                out[i] = self._ladder(audios[i], lang, segs)
        return [
            self._identify(
                audios[i], t if t is not None else self._ladder(audios[i], items[i][2], None)
            )
            for i, t in enumerate(out)
        ]

    def _check(self, lang: str) -> None:
        check_lang(lang)
        if self.english_only and lang != "en":
            raise ValueError(f"model {self.model!r} is English-only; use 'base' for lang {lang!r}")


class _FirstWindow(threading.local):
    """The first encoder output a thread's transcription computes while :meth:`kept` is open:
    the first pass's first 30 s window, which the language ID reuses. Per thread, since replies
    are decoded on several threads at once through one model."""

    armed: bool = False
    output: Any = None

    def wrap(self, encode: Any) -> Any:
        def keep_first(features: Any, *args: Any, **kwargs: Any) -> Any:
            out = encode(features, *args, **kwargs)
            if self.armed:
                self.armed, self.output = False, out
            return out

        return keep_first

    @contextlib.contextmanager
    def kept(self) -> Iterator[None]:
        self.armed, self.output = True, None
        try:
            yield
        finally:
            self.armed, self.output = False, None


NUMERAL_CHARS = frozenset("0123456789%$£€¥")
#: languages whose numerals are suppressed. Measured on real recordings (benchmarks/real_speech.py):
#: in English it removed 3 speed leaks on a digit-string clip that Whisper wrote as "1,001" in one
#: copy and "1-0-0-0-1" in another; in Mandarin, Whisper base then dropped spoken words around
#: numbers ("百分之五十" -> "五十") and 4 new leaks appeared, so Mandarin keeps Whisper's digits
#: (each counted as one syllable, docs/metrics.md)
SUPPRESS_NUMERALS = ("en",)


def numeral_tokens(vocab_size: int, decode: Any) -> list[int]:
    """Ids of text tokens that write a digit or a currency/percent sign, to suppress in decoding.

    Whisper writes numbers as digits in several forms ("1,001", "1-0-0-0-1", "1001") for one
    spoken phrase, and a syllable count of the digits depends on that choice; with these tokens
    banned, numbers come out as words, whose syllables are the ones spoken. Special tokens (ids
    from ``<|endoftext|>`` on) are not text and are never suppressed here.
    """
    out = []
    for i in range(vocab_size):
        piece = decode(i)
        if piece.startswith("<|"):
            break
        if NUMERAL_CHARS & set(piece):
            out.append(i)
    return out


def redecode_if_needed(decode: Any) -> Transcript:
    """The decoding ladder both backends share: ``decode(False)``, then, when that pass loops or
    is unsure, ``decode(True)``, kept unless it loops or is empty too."""
    first = decode(False)
    if not {"asr_repetition", "asr_low_confidence"} & set(first.flags):
        return first
    retry = decode(True)
    return first if {"asr_repetition", "asr_empty"} & set(retry.flags) else retry


class OpenAIWhisperASR:
    """Whisper through the ``openai-whisper`` package (needs torch; the paper's large-v3).

    Args:
        model: a Whisper model name (``"large-v3"``) or checkpoint path.
        device: ``"cuda"``, ``"cpu"``, or None to let whisper choose.
    """

    backend = "openai-whisper"

    def __init__(self, model: str = "large-v3", *, device: str | None = None) -> None:
        if importlib.util.find_spec("whisper") is None:
            raise missing_extra("openai-whisper", "openai-whisper")
        self.model, self.device = model, device
        self.name = f"{self.backend}:{model}"
        self._model: Any = None
        self._suppress: list[int] = []

    def transcribe(self, wave: np.ndarray, sr: int, lang: str) -> Transcript:
        """Transcribe one reply with the same decoding settings as :class:`FasterWhisperASR`.

        Raises:
            ValueError: bad audio or an unsupported language.
            ImportError: openai-whisper is not installed.
        """
        check_lang(lang)
        audio = to_16k(wave, sr)
        if self._model is None:
            try:
                import whisper
            except ImportError as exc:
                raise missing_extra("openai-whisper", "openai-whisper") from exc
            self._model = whisper.load_model(self.model, device=self.device)
            from whisper.tokenizer import get_tokenizer

            tok = get_tokenizer(self._model.is_multilingual)
            self._suppress = numeral_tokens(tok.eot, lambda i: tok.decode([i]))
        tr = redecode_if_needed(lambda retry: self._decode(audio, lang, retry=retry))
        import whisper

        mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(audio), self._model.dims.n_mels).to(
            self._model.device
        )
        _tokens, probs = self._model.detect_language(mel)
        return with_language(tr, probs.items())

    def _decode(self, audio: np.ndarray, lang: str, *, retry: bool) -> Transcript:
        # openai-whisper has no n-gram ban: its re-decode is beam search alone
        result = self._model.transcribe(
            audio,
            language=lang,
            task="transcribe",
            temperature=TEMPERATURES,
            beam_size=RETRY_BEAM_SIZE if retry else None,
            suppress_tokens=[-1, *(self._suppress if lang in SUPPRESS_NUMERALS else ())],
            compression_ratio_threshold=COMPRESSION_RATIO_LIMIT,
            logprob_threshold=LOW_LOGPROB,
            no_speech_threshold=0.6,
            condition_on_previous_text=False,
            word_timestamps=True,
            hallucination_silence_threshold=2.0,
        )
        segments = result.get("segments", [])
        return make_transcript(
            (s["text"] for s in segments),
            (
                (w["word"], w["start"], w["end"], w.get("probability", 1.0))
                for s in segments
                for w in s.get("words", [])
            ),
            ((s["avg_logprob"], s["end"] - s["start"]) for s in segments),
            lang=lang,
            backend=self.backend,
            model=self.model,
            extra_flags=("asr_redecoded",) if retry else (),
        )
