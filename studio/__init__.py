"""Resource Studio: the desktop app for designing and live-serving MCP resources."""
