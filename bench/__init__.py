"""Benchmarks of Resource Studio against the official MCP SDK server (run with `python bench/run.py`)."""
