"""The protocol eras a test run can use: the initialize handshake, and 2026-07-28 stateless requests."""

__all__ = ["ERAS"]

ERAS = ("legacy", "2026-07-28")
