"""Stand-in for GLM-4-Voice's speech_tokenizer package (see tests/standins)."""
