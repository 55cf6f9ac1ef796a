"""Shared test setup: headless Qt for every test, whatever imports Qt first."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
