"""Evaluation: RAGAS-compatible samples, metrics and the runner."""
