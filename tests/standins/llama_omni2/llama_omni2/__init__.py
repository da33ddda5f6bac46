"""Stand-in for the llama_omni2 package of ictnlp/LLaMA-Omni2 (see tests/standins)."""
