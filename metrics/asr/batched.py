"""Batched first pass of the ASR decoding ladder: many replies through Whisper at once.

faster-whisper's ``BatchedInferencePipeline`` encodes and decodes several 30 s windows as one
batch. Given one long array and ``clip_timestamps``, it makes each clip its own window, so the
replies are laid end to end (each starting on a whole second, with silence between, so no sample
of one reply falls into another's clip) and each reply becomes one window of the batch.

Per window it decodes exactly as the sequential first pass does (greedy at temperature 0, the
same prompt, timestamps predicted, the same suppressed tokens, at most 1 s to the first
timestamp), and the no-speech rule of sequential decoding is applied here after the fact (a window
whose no-speech probability is over 0.6 and whose average log-probability is not above -1.0 is
empty: our reading of faster-whisper's ``generate_segments``). Where it differs, by construction:

- one window per reply: a reply over 30 s is not batched, and a reply whose window the
  sequential decoder would resume from its last timestamp (the window's tokens do not end on a
  single timestamp) is handed back as ``None``: the caller decodes both sequentially, so the
  words such a window leaves unfinished are not lost;
- no ``hallucination_silence_threshold`` (the sequential pass skips a hallucinated segment
  inside more than 2 s of silence);
- word timestamps are aligned against the reply's duration rounded up to a whole second.

The re-decode of the ladder (beam 5 with a 3-gram ban) stays sequential, reply by reply, so a
transcript differs from the unbatched one only if the first passes differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

SR = 16000
WINDOW_S = 30.0
NO_SPEECH = 0.6


def layout(lengths: Sequence[int]) -> list[int]:
    """Start sample of each reply: whole seconds, at least one second of silence between."""
    starts, at = [], 0
    for n in lengths:
        starts.append(at)
        at += (n // SR + 2) * SR
    return starts


def resumes(tokens: Sequence[int], timestamp_begin: int) -> bool:
    """Whether sequential decoding would go on in a new window after these tokens: there are
    consecutive timestamps and the tokens do not end on a single timestamp (faster-whisper's
    ``_split_segments_by_timestamps``, read here as its rule)."""
    single_end = len(tokens) >= 2 and tokens[-2] < timestamp_begin <= tokens[-1]
    pairs = any(
        tokens[i] >= timestamp_begin and tokens[i - 1] >= timestamp_begin
        for i in range(1, len(tokens))
    )
    return pairs and not single_end


def first_pass(
    model: Any, audios: Sequence[np.ndarray], lang: str, options: dict[str, Any], batch_size: int
) -> list[list[Any] | None]:
    """The first-pass segments of each reply (16 kHz, each at most 30 s), decoded in batches,
    or ``None`` for a reply the sequential decoder would resume in a second window.

    ``options`` are the sequential first pass's decoding options (language, beam size,
    temperature, thresholds, suppressed tokens); the ones the batched pipeline lacks are dropped.
    Segment and word times come back relative to each reply.
    """
    from faster_whisper import BatchedInferencePipeline
    from faster_whisper.tokenizer import Tokenizer

    class Recording(BatchedInferencePipeline):
        """Keeps each window's whole token list (the pipeline returns only its segments)."""

        tokens: list[list[int]] = []

        def generate_segment_batched(self, *args: Any, **kwargs: Any) -> Any:
            encoder_output, output = super().generate_segment_batched(*args, **kwargs)
            self.tokens += [list(o["tokens"]) for o in output]
            return encoder_output, output

    if any(len(a) > WINDOW_S * SR for a in audios):
        raise ValueError("a reply over 30 s cannot share a batch; decode it sequentially")
    starts = layout([len(a) for a in audios])
    total = (
        np.zeros(starts[-1] + len(audios[-1]) + SR, dtype=np.float32)
        if audios
        else np.zeros(0, np.float32)
    )
    for s, a in zip(starts, audios, strict=True):
        total[s : s + len(a)] = a
    # end + half a sample: the pipeline truncates seconds x 16000 to whole samples
    clips = [
        {"start": s / SR, "end": (s + len(a) + 0.5) / SR}
        for s, a in zip(starts, audios, strict=True)
    ]
    keep = {
        "beam_size",
        "temperature",
        "compression_ratio_threshold",
        "log_prob_threshold",
        "no_speech_threshold",
        "suppress_tokens",
        "word_timestamps",
    }
    kw = {k: v for k, v in options.items() if k in keep}
    pipe = Recording(model)
    pipe.tokens = []
    segments, _info = pipe.transcribe(
        total,
        language=lang,
        task="transcribe",
        clip_timestamps=clips,
        batch_size=batch_size,
        without_timestamps=False,
        vad_filter=False,
        **kw,
    )
    by_start = {int(s * 100 // SR): i for i, s in enumerate(starts)}  # seek is in 10 ms frames
    out: list[list[Any] | None] = [[] for _ in audios]
    for seg in segments:
        out[by_start[seg.seek]].append(seg)
    low = options.get("log_prob_threshold")
    tb = Tokenizer(
        model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=lang
    ).timestamp_begin
    for i, segs in enumerate(out):
        if (
            segs
            and segs[0].no_speech_prob > NO_SPEECH
            and (low is None or segs[0].avg_logprob <= low)
        ):
            out[i] = []  # sequential decoding skips the window before looking at its tokens
        elif resumes(pipe.tokens[i], tb):
            out[i] = None
        else:
            out[i] = [_shift(seg, starts[i] / SR) for seg in segs]
    return out


def _shift(seg: Any, offset: float) -> Any:
    from dataclasses import replace

    words = (
        None
        if seg.words is None
        else [replace(w, start=w.start - offset, end=w.end - offset) for w in seg.words]
    )
    return replace(seg, start=seg.start - offset, end=seg.end - offset, words=words)
