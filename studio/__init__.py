"""Resource Studio: the desktop app for designing and live-serving MCP resources."""

# Before any widget exists: see resources_qt.qt.compat.
import resources_qt.qt.compat  # noqa: F401
