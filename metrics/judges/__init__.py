"""Relevance judges: the interface and registry (``base``), prompts and reply parsing
(``prompting``), the verdict cache (``cache``) and one module per backend."""
