"""Settings of the snippet pools the snippet tests share (fixtures in tests/resources_qt/snippets/conftest.py)."""

TIMEOUT = 1.5
"""Reader timeout of the test pools: short, so timeout tests are quick."""

MEMORY_MB = 256
"""Memory cap of each test worker."""
