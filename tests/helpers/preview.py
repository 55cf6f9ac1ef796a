"""Preview outcomes for widget tests: the engine's real PreviewOutcome with defaults for what a test ignores."""

from __future__ import annotations

from typing import Any

from resources_qt.server.reading import PreviewOutcome


def Outcome(
    uri: str,
    resource_name: str | None = None,
    is_template: bool = False,
    template: str | None = None,
    params: dict[str, Any] | None = None,
    contents: list[Any] | None = None,
    elapsed_ms: float = 1.5,
    **error: Any,
) -> PreviewOutcome:
    return PreviewOutcome(
        uri=uri,
        resource_name=resource_name,
        is_template=is_template,
        template=template,
        params=params or {},
        contents=contents,
        elapsed_ms=elapsed_ms,
        **error,
    )
