"""Stand-in for GLM-4-Voice's web_demo.py: only the shape the wrapper reads (never executed).

The wrapper parses this file and takes the string assigned to ``system_prompt`` in the
``input_mode == "audio"`` branch; the strings here are stand-ins, not the model's prompts.
"""


def inference_fn(input_mode):
    if input_mode == "audio":
        system_prompt = "STAND-IN speech system prompt. "
    else:
        system_prompt = "STAND-IN text system prompt."
    return system_prompt
