"""Bus URLs (schemes, hosts, databases; passwords redacted in every form), password files, and channels."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from resources_qt.bus.urls import (
    MAX_PASSWORD_FILE_BYTES,
    check_bus_url,
    check_password,
    default_channel,
    read_password_file,
    redact,
    url_has_password,
)


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


@pytest.mark.parametrize(
    ("url", "shown"),
    [("redis://:s%23cr%2Fet@host:6379/0", "redis://:***@host:6379/0"),
     ("redis://host/0?password=s3cret&db=2", "redis://host/0?password=***&db=2"),
     ("redis://host/0?pass%77ord=s3cret", "redis://host/0?password=***"),
     ("redis://host/0?client_name=s3cret&socket_timeout=2.5", "redis://host/0?client_name=***&socket_timeout=2.5"),
     ("unix://:s3cret@/run/redis.sock?db=1", "unix://:***@/run/redis.sock?db=1"),
     ("redis://:p@ss@host", "redis://:***@host")],
)
def test_every_password_form_is_redacted(url: str, shown: str) -> None:
    assert check_bus_url(url) == url
    assert redact(url) == shown
    assert url_has_password(url) == ("client_name" not in url)


@pytest.mark.parametrize(
    ("url", "problem"),
    [("redis://:s3#cret@host/0", "'#'"), ("redis://:s3/cret@host/0", "'@' after the host"),
     ("redis://:s3?cret@host/0", "'@' after the host"), ("redis://s3cret@host/0", "no ':'"),
     ("redis://:s3cret@host:s3cret/0", "port"), ("redis://ho$t/0", "host name"), ("redis://h o/0", "spaces")],
)
def test_a_malformed_url_is_described_without_its_parts(url: str, problem: str) -> None:
    with pytest.raises(ValueError, match=re.escape(problem)) as caught:
        check_bus_url(url)
    assert "s3" not in str(caught.value) and "cret" not in str(caught.value)
    assert redact(url) == "<malformed bus URL>"


@given(st.text(min_size=1, max_size=40).map(lambda text: f"Q{text}Q"))
def test_no_password_survives_redaction(password: str) -> None:
    # 'Q' appears nowhere else in these URLs: any trace of the password would show it.
    for url in (f"redis://:{quote(password, safe='')}@127.0.0.1:6379/0",
                f"redis://127.0.0.1:6379/0?password={quote(password, safe='')}"):
        assert check_bus_url(url) == url
        assert "Q" not in redact(url)
    with pytest.raises(ValueError) as caught:
        check_bus_url(f"redis://:{password}#@127.0.0.1:6379/0")
    assert "Q" not in str(caught.value)


def test_a_password_goes_once() -> None:
    assert check_password("redis://host/0", "pw") == "pw"
    assert check_password("redis://:pw@host/0", None) is None
    for url in ("redis://:pw@host/0", "redis://host/0?password=pw"):
        with pytest.raises(ValueError, match="once"):
            check_password(url, "pw")
    with pytest.raises(ValueError, match="empty"):
        check_password("redis://host/0", "")


def test_password_files(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    for written, read in (("s3cret\n", "s3cret"), ("s3cret\r\n", "s3cret"), (" s3 cret ", " s3 cret ")):
        path.write_text(written, encoding="utf-8", newline="")
        assert read_password_file(str(path)) == read
    link = tmp_path / "link"
    link.symlink_to(path)  # secret managers mount their files as links
    assert read_password_file(str(link)) == " s3 cret "
    for content, problem in ((b"", "empty"), (b"\n", "empty"), (b"a\nb\n", "one line"), (b"\xff", "UTF-8"),
                             (b"x" * (MAX_PASSWORD_FILE_BYTES + 1), "larger than")):
        path.write_bytes(content)
        with pytest.raises(ValueError, match=problem) as caught:
            read_password_file(str(path))
        assert "x" * 8 not in str(caught.value)
    with pytest.raises(ValueError, match="No such file"):
        read_password_file(str(tmp_path / "missing"))
