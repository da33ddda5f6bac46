"""Scoring: per-cell VSP/SVD with bootstrap CIs, relevance gating, paired statistics."""
