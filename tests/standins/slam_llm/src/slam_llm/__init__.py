"""Stand-in for the slam_llm package (see tests/standins)."""
