"""Tournaments: formats, scheduling, executors, state, ratings and the runner."""
