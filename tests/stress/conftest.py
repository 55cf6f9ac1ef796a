"""Stress-suite setup: reduced counts by default, full counts when STRESS_FULL=1."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Sibling helper modules (stress_support, ...) are imported by plain name.
sys.path.insert(0, str(Path(__file__).parent))

FULL = os.environ.get("STRESS_FULL") == "1"


@pytest.fixture
def full() -> bool:
    """True when the run asks for the full counts (STRESS_FULL=1)."""
    return FULL
