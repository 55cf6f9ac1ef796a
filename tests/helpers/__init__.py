"""Shared test helpers, imported by test modules (never from conftest)."""
