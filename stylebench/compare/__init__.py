"""Comparing runs of different models: paired statistics, calibration rows, tables, HTML."""
