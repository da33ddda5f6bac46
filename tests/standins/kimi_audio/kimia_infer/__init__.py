"""Stand-in for the ``kimia_infer`` package of MoonshotAI/Kimi-Audio (see tests/standins)."""
