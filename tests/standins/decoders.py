"""STAND-INS of three models' next-token functions: our reading of their arithmetic, in our words.

The official functions cannot be imported here (their modules load CUDA models at import or
need the checkout), so these redo the same operations in the same order; each names its source.
They are used to check that the wrappers' greedy mappings really give the argmax, and that the
literal ``temperature=0`` really breaks the official code.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def freeze_omni_post_decode(logits, temperature=1.0, top_k=0, top_p=0.0):
    """VITA-MLLM/Freeze-Omni 3e17af4, models/audioLLM.py ``_post_decode`` (lines 339-385):
    divide by the temperature unless it is 1, softmax, keep the top k, keep the top-p mass
    (always keeping the first), renormalise, then always draw with ``torch.multinomial``."""
    x = logits.clone()
    if temperature != 1.0:
        x = x / temperature
    probs = F.softmax(x, dim=-1)
    if top_k > 0:
        vals, idx = torch.topk(probs, top_k)
        probs = torch.zeros_like(probs).scatter_(0, idx, vals)
        probs = probs / probs.sum()
    if top_p > 0.0:
        sorted_p, sorted_i = torch.sort(probs, descending=True)
        drop = torch.cumsum(sorted_p, dim=-1) > top_p
        if drop[0]:
            drop[1:] = drop[:-1].clone()
            drop[0] = False
        probs[sorted_i[drop]] = 0
        probs = probs / probs.sum()
    return int(torch.multinomial(probs, 1))


def slam_sample_next_token(logits, do_sample=False, temperature=1.0, top_k=0, top_p=1.0):
    """X-LANCE/SLAM-LLM a68e78f, examples/s2s/model/slam_model_s2s.py ``sample_next_token``
    (lines 638-677): divide by the temperature first, filter top-k / top-p with -inf, then
    draw (do_sample) or take the argmax."""
    x = logits.clone() / temperature
    if top_k > 0:
        vals, _ = torch.topk(x, min(top_k, x.size(-1)))
        x[x < vals[..., [-1]]] = -float("inf")
    if top_p < 1.0:
        sorted_x, sorted_i = torch.sort(x, descending=True)
        drop = torch.cumsum(F.softmax(sorted_x, dim=-1), dim=-1) > top_p
        drop[..., 1:] = drop[..., :-1].clone()
        drop[..., 0] = False
        x[sorted_i[drop]] = -float("inf")
    if do_sample:
        return int(torch.multinomial(F.softmax(x, dim=-1), 1))
    return int(torch.argmax(x, dim=-1))


def litgpt_sample(logits, temperature=1.0, top_k=None, top_p=1.0):
    """gpt-omni/mini-omni 26c31d5, litgpt/generate/base.py ``sample`` (lines 39-62): crop to the
    top k, then draw whenever temperature > 0 *or* top_p > 0 (scaling only when temperature >
    0); the argmax only when both are 0. (The top-p crop is left out: every call here has
    top_p 1, where upstream skips it too.)"""
    x = logits.clone()
    if top_k is not None:
        vals, idx = torch.topk(x, min(top_k, x.size(-1)))
        x = torch.full_like(x, float("-inf")).scatter_(-1, idx, vals)
    if temperature > 0.0 or top_p > 0.0:
        if temperature > 0.0:
            x = x / temperature
        return int(torch.multinomial(F.softmax(x, dim=-1), 1))
    return int(torch.argmax(x, dim=-1))


def minicpmo_chat_generation_config(sampling: bool, **kwargs):
    """openbmb/MiniCPM-o-2_6 modeling_minicpmo.py ``MiniCPMO.chat`` (hub remote code; read in
    the copy at jack139/minicpmo-backend dced0af, modeling_minicpmo.py): a fixed dict per
    ``sampling``, then only *its own keys* are overwritten from chat's keyword arguments."""
    if sampling:
        config = {
            "top_p": 0.8,
            "top_k": 100,
            "temperature": 0.7,
            "do_sample": True,
            "repetition_penalty": 1.05,
        }
    else:
        config = {"num_beams": 3, "repetition_penalty": 1.2}
    config.update((k, kwargs[k]) for k in config.keys() & kwargs.keys())
    return config
