"""Stand-in for utils/snac_utils.py (gpt-omni): reconscruct_snac and reconstruct_tensors.

Like the official helper, ``reconscruct_snac`` shifts layer i by i + 1 tokens in place and
interleaves the seven layers behind "#" separators; ``reconstruct_tensors`` returns code tensors.
"""

from __future__ import annotations

import torch

CALLS: list[tuple] = []


def reconscruct_snac(output_list):
    CALLS.append(("reconscruct_snac", [len(layer) for layer in output_list]))
    if len(output_list) == 8:
        output_list = output_list[:-1]
    for i in range(7):
        output_list[i] = output_list[i][i + 1 :]
    flat = []
    for j in range(len(output_list[-1])):
        flat.append("#")
        flat += [output_list[i][j] for i in range(7)]
    return flat


def reconstruct_tensors(flattened_output, device=None):
    CALLS.append(("reconstruct_tensors", len(flattened_output)))
    frames = flattened_output.count("#")
    return [torch.zeros(1, frames, dtype=torch.long)]
