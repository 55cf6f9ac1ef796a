"""Resource-layer errors: plain exceptions that carry a JSON-RPC code and map to the SDK's MCPError unchanged."""

from __future__ import annotations

import pickle

import pytest
from mcp.shared.exceptions import MCPError

from resources_qt.errors import (
    ReaderFailedError,
    ReaderMissingError,
    ResourceError,
    ResourceNotFoundError,
    ValidationError,
)
from resources_qt.project import ProjectError

_ERRORS = [
    (ValidationError("URI must not be empty", field="uri", data={"uri": ""}), -32602, {"uri": ""}),
    (ReaderMissingError("Resource 'a' has no reader"), -32603, None),
    (ReaderFailedError("reader raised KeyError: 'x'", data={"uri": "a://1"}), -32000, {"uri": "a://1"}),
    (ResourceNotFoundError("x://1"), -32002, {"uri": "x://1"}),
    (ResourceNotFoundError("x://1", code=-32602), -32602, {"uri": "x://1"}),
    (ReaderFailedError("custom", code=-32001), -32001, None),
]


@pytest.mark.parametrize(("error", "code", "data"), _ERRORS)
def test_each_error_maps_to_the_mcp_error_a_client_receives(error: ResourceError, code: int, data: object) -> None:
    assert (error.code, error.data) == (code, data)
    assert str(error) == error.message
    mapped = error.to_mcp()
    assert type(mapped) is MCPError
    assert (mapped.code, mapped.message, mapped.data) == (error.code, error.message, error.data)
    assert mapped.error.model_dump(exclude_none=True) == (
        {"code": code, "message": error.message} | ({"data": data} if data is not None else {})
    )


def test_the_errors_are_not_sdk_errors_but_keep_their_python_bases() -> None:
    assert not issubclass(ResourceError, MCPError)
    assert issubclass(ValidationError, ValueError) and issubclass(ResourceNotFoundError, LookupError)
    assert issubclass(ProjectError, ValidationError)


@pytest.mark.parametrize(("error", "code", "data"), _ERRORS)
def test_errors_survive_pickling_with_their_code_and_data(error: ResourceError, code: int, data: object) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert (copy.code, copy.message, copy.data) == (code, error.message, data)
    assert getattr(copy, "field", None) == getattr(error, "field", None)
