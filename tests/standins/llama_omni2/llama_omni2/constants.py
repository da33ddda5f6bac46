"""Stand-in for llama_omni2/constants.py: the speech placeholder and its index."""

SPEECH_TOKEN_INDEX = -200
DEFAULT_SPEECH_TOKEN = "<speech>"
