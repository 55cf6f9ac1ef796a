"""The --http address: port alone, host and port, bracketed IPv6, and clear refusals."""

from __future__ import annotations

import pytest

from resources_qt.address import parse_http_address


def test_forms_of_the_address() -> None:
    assert parse_http_address("8765") == ("127.0.0.1", 8765)
    assert parse_http_address(":8765") == ("127.0.0.1", 8765)
    assert parse_http_address("0.0.0.0:9000") == ("0.0.0.0", 9000)
    assert parse_http_address("[::1]:9000") == ("::1", 9000)


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "expects [HOST:]PORT"), ("host:", "expects [HOST:]PORT"), ("x:70000", "between 0 and 65535")],
)
def test_bad_addresses_name_the_option(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=r"--http") as caught:
        parse_http_address(text)
    assert message in str(caught.value)
