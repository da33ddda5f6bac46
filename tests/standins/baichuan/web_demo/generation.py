"""Stand-in for Baichuan-Omni-1.5 web_demo/generation.py.

``GenerationAudioTokens.generate(model, input_ids, ...)`` appends one audio-token marker and
returns ``audios_sequences``; ``decode_wave_vocoder`` turns them into one [1, 4800] tone segment
(0.2 s at 24 kHz); ``decode_save_concat`` joins segments with the official cross-fade rule
(an ``overlap``-sample blend inserted between whole segments) and saves the file.
"""

from __future__ import annotations

from types import SimpleNamespace

import soundfile as sf
import torch
from standins import tone

CALLS: list[tuple] = []


class GenerationAudioTokens:
    @staticmethod
    def generate(
        model,
        input_ids,
        attention_mask=None,
        past_key_values=None,
        max_new_tokens=500,
        do_sample=True,
        temperature=0.5,
        top_k=5,
        top_p=0.85,
        repetition_penalty=1.3,
        return_dict_in_generate=False,
    ):
        assert return_dict_in_generate
        assert int(input_ids[0, -1]) == model.config.audio_config.audiogen_start_token_id
        CALLS.append(
            (
                "audio",
                input_ids.shape[1],
                past_key_values,
                max_new_tokens,
                temperature,
                top_k,
                top_p,
                repetition_penalty,
            )
        )
        seq = torch.cat([input_ids, torch.tensor([[9]])], dim=1)
        return SimpleNamespace(
            sequences=seq, past_key_values=f"kv{seq.shape[1]}", audios_sequences=torch.ones(1, 3, 8)
        )


def decode_wave_vocoder(response, vocoder, model):
    CALLS.append(("decode_wave_vocoder", tuple(response.shape)))
    # the real flow-matching decoder starts from noise: two decodes of one response differ
    wave = torch.from_numpy(tone(24000, seconds=0.2)).view(1, -1)
    return [wave + 0.01 * torch.randn(wave.shape, dtype=wave.dtype)]


def decode_save_concat(
    response_list, vocoder, model, path, sampling_rate=16000, wave_concat_overlap=800
):
    CALLS.append(("decode_save_concat", len(response_list), sampling_rate, wave_concat_overlap))
    waves = [w for r in response_list for w in decode_wave_vocoder(r, vocoder, model)]
    out = [waves[0]]
    for w in waves[1:]:
        ramp = torch.linspace(1.0, 0.0, wave_concat_overlap)[None, :]
        out.append(
            out[-1][:, -wave_concat_overlap:] * ramp + w[:, :wave_concat_overlap] * (1 - ramp)
        )
        out.append(w)
    sf.write(path, torch.cat(out, dim=1)[0].numpy(), sampling_rate)
