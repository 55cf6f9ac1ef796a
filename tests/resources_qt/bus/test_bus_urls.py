"""Bus URLs (schemes, hosts, databases, passwords redacted) and channels derived from server names."""

from __future__ import annotations

import pytest

from resources_qt.bus.urls import check_bus_url, default_channel, redact


@pytest.mark.parametrize(
    "url",
    ["redis://localhost:6379/0", "redis://:s3cret@10.0.0.5:6380/2", "rediss://user:pw@cache.example.com:6380",
     "redis://localhost", "unix:///run/redis.sock", "redis://[::1]:6379/0"],
)
def test_good_urls_pass(url: str) -> None:
    assert check_bus_url(f"  {url} ") == url


@pytest.mark.parametrize(
    ("url", "problem"),
    [("", "must not be empty"), ("http://localhost:6379", "scheme"), ("localhost:6379", "scheme"),
     ("redis://", "needs a host"), ("redis://localhost:0", "port 0"), ("redis://localhost:99999", "out of range"),
     ("redis://localhost/db1", "database must be a number"), ("unix://", "socket path")],
)
def test_bad_urls_name_the_problem(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        check_bus_url(url)


def test_passwords_never_reach_messages() -> None:
    assert redact("redis://:s3cret@host:6379/0") == "redis://:***@host:6379/0"
    assert redact("rediss://admin:s3cret@[::1]:6380") == "rediss://admin:***@[::1]:6380"
    assert redact("redis://host:6379/0") == "redis://host:6379/0"
    with pytest.raises(ValueError) as caught:
        check_bus_url("http://:s3cret@host")
    assert "s3cret" not in str(caught.value)


def test_channel_from_server_name() -> None:
    assert default_channel("Support desk") == "resource-studio:support-desk"
    assert default_channel("  Knowledge Base v2! ") == "resource-studio:knowledge-base-v2"
    with pytest.raises(ValueError, match="--bus-channel"):
        default_channel("!!!")
