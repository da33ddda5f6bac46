"""The captioning probe: speaking-style captioners, caption judges, and captioner metrics."""
