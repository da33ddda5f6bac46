"""Speech synthesis for user turns and embedded models, and FFmpeg style transforms."""
