"""Speech-to-speech models behind one interface: ``respond(history, user_turn, decode) -> Turn``."""
