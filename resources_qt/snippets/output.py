"""SnippetOutput: everything one snippet call printed, stream by stream in the order it arrived."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ReadOutputListener", "SnippetOutput", "add_chunk"]


@dataclass(frozen=True, slots=True)
class SnippetOutput:
    """What one read (or completion) printed.

    `chunks` are ("stdout" | "stderr", text) in the order the pool received
    them (consecutive writes to one stream are merged); `uri` is "" for a
    completion; `started` is the call's start as `time.time()`.
    """

    key: str
    uri: str
    started: float
    chunks: tuple[tuple[str, str], ...]

    @property
    def text(self) -> str:
        """Both streams joined, as `add_output_listener` sees them."""
        return "".join(text for _, text in self.chunks)


ReadOutputListener = Callable[[SnippetOutput], None]
"""`listener(output)`: called on a pool thread once per call that printed anything."""


def add_chunk(chunks: list[list[str]], stream: str, text: str) -> None:
    """Append `text` of `stream` to a call's chunks, merged into the last one when it is of the same stream."""
    if chunks and chunks[-1][0] == stream:
        chunks[-1][1] += text
    else:
        chunks.append([stream, text])
