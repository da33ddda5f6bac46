"""Dialogue sets: the text pools we wrote, the builder, and the cached default set."""
