"""Turning a read seen in the preview into a test: "Add as test" records the URI and what it answered."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from resources_qt.content import ResourceContent
from resources_qt.testing.observed import ObservedContent, ObservedRead
from resources_qt.testing.snapshots import SnapshotStore, render_snapshot
from resources_qt.testing.spec import Expectation, TestSpec

__all__ = ["observed_from_contents", "record_snapshot", "test_from_read", "unique_test_name"]


def unique_test_name(base: str, existing: Collection[str]) -> str:
    """`base`, or `base (2)`, `base (3)`... whichever no test has yet."""
    if base not in existing:
        return base
    number = 2
    while f"{base} ({number})" in existing:
        number += 1
    return f"{base} ({number})"


def test_from_read(
    uri: str,
    *,
    resource: str | None,
    contents: Sequence[ResourceContent] | None,
    error_code: int | None,
    existing: Collection[str] = (),
) -> TestSpec:
    """A test expecting what this read answered: the resource it resolved to, and the first
    content's MIME type plus a snapshot, or the error code. Named after the URI (made unique).
    """
    if not uri:
        raise ValueError("a test needs a URI")
    if error_code is not None:
        expect = Expectation(resource=resource, error=error_code)
    else:
        first = contents[0] if contents else None
        expect = Expectation(resource=resource, mime_type=(first.mime_type or None) if first else None, snapshot=True)
    name = unique_test_name(uri, existing)
    return TestSpec(name=name, uri=uri, expect=expect, named=name != uri)


test_from_read.__test__ = False  # type: ignore[attr-defined]  # a function named test_* is not a pytest test


def observed_from_contents(uri: str, contents: Sequence[ResourceContent]) -> ObservedRead:
    """Contents as the runner observes them (blobs decoded), e.g. to snapshot a preview's result."""
    return ObservedRead(
        uri=uri,
        contents=tuple(
            ObservedContent(uri=c.uri, mime_type=c.mime_type or None, blob=c.data())
            if c.is_blob
            else ObservedContent(uri=c.uri, mime_type=c.mime_type or None, text=c.text)
            for c in contents
        ),
    )


def record_snapshot(store: SnapshotStore, spec: TestSpec, contents: Sequence[ResourceContent]) -> None:
    """Record `contents` as the snapshot of `spec` (what `--update-snapshots` would write for the same read)."""
    store.write(spec.name, render_snapshot(observed_from_contents(spec.uri, contents)))
