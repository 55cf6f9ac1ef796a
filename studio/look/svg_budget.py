"""What an SVG costs to draw, counted from its XML before Qt sees it (expat, entities refused); Qt-free.

QSvgRenderer cannot be interrupted and holds the GIL while it parses and draws, so a worker
thread drawing a hostile SVG stalls the window as surely as the GUI thread would: 1.8 KB of
`<use>` fan-out (ten uses of ten uses of ...) drew for over 120 s, one feGaussianBlur over a
2000 px square took 0.75 s a primitive. The counts here are upper estimates made in one pass of
the XML plus one walk of its elements; icons are drawn only within ICON_BUDGET, the preview
draws in a child process (studio/preview/render_process.py) and checks PREVIEW_BUDGET first.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from xml.parsers import expat

__all__ = ["ICON_BUDGET", "PREVIEW_BUDGET", "SvgBudget", "SvgCount", "count_svg", "svg_problem"]


@dataclass(frozen=True)
class SvgBudget:
    """Limits on one SVG; `svg_problem` names the first one exceeded."""

    max_bytes: int
    max_elements: int
    max_depth: int
    max_drawn: int
    """Elements drawn once every `<use>` and `url(#...)` reference is followed, transitively."""
    max_segments: int
    """Path, polygon and polyline segments and text characters drawn, references followed likewise."""
    max_filter_pixels: int
    """Filter primitives applied times the pixels of their filter regions, at the size drawn."""


ICON_BUDGET = SvgBudget(max_bytes=1024 * 1024, max_elements=10_000, max_depth=100, max_drawn=20_000,
                        max_segments=5_000, max_filter_pixels=500_000)  # fmt: skip
"""A thumbnail is drawn on a pool thread of the window: within this, about 0.1 s at most (measured)."""
PREVIEW_BUDGET = SvgBudget(max_bytes=8 * 1024 * 1024, max_elements=200_000, max_depth=200, max_drawn=500_000,
                           max_segments=2_000_000, max_filter_pixels=50_000_000)  # fmt: skip
"""The preview draws in a child with a deadline; this refuses at once, with the reason, what would miss it."""

_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_URL_REF = re.compile(r"url\(\s*['\"]?#([^)'\"\s]+)")
_FILTER_REF = re.compile(r"filter\s*:\s*url\(\s*['\"]?#([^)'\"\s]+)")
_MARKER_REF = re.compile(r"marker(?:-mid)?\s*:\s*url\(\s*['\"]?#([^)'\"\s]+)")
_LENGTH = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(%|[a-zA-Z]*)")
_TRANSFORM = re.compile(r"(matrix|scale|skewX|skewY)\s*\(([^)]*)\)")
_UNITS = {"": 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54, "in": 96.0, "em": 16.0,
          "ex": 8.0}  # fmt: skip
_TEXT = frozenset({"text", "tspan", "textPath", "tref"})
_SIZED = frozenset({"rect", "image", "use", "svg", "foreignObject", "pattern", "symbol", "mask"})
_CAP = 10**12
_DEFAULT_REGION = 1.2  # a filter region is 120% of the bounding box by default (-10% .. 110%)


@dataclass
class SvgCount:
    """What `count_svg` found: sizes, counts (references followed) and the first problem met while reading."""

    width: float = 0.0
    height: float = 0.0
    view_box: tuple[float, float] = (0.0, 0.0)
    elements: int = 0
    depth: int = 0
    drawn: int = 0
    segments: int = 0
    filter_work: float = 0.0
    """Filter primitives times region area, in the root's user units squared (see `filter_pixels`)."""
    problem: str = ""
    invalid: str = ""
    """Why the bytes are not XML ("" when they are): the SVG is not drawn at all."""

    def filter_pixels(self, side: float) -> int:
        """The filter work in pixels when the SVG is drawn `side` pixels along its longer side."""
        scale = side / max(self.view_box[0], self.view_box[1], 1e-9)
        return int(min(self.filter_work * scale * scale, 1e15))


class _Stop(Exception):
    """Raised from an expat handler to stop reading at once (the message is the problem)."""


@dataclass
class _Node:
    tag: str
    parent: int
    children: list[int] = field(default_factory=list)
    refs: list[tuple[str, bool]] = field(default_factory=list)  # (id, drawn at each vertex: a mid marker)
    segments: int = 0
    size: tuple[float, float] | None = None
    scale: float = 1.0
    filter: str = ""
    region: tuple[float, float, bool] = (_DEFAULT_REGION, _DEFAULT_REGION, False)  # a <filter>'s w, h, user space
    primitives: int = 0


def _length(value: str | None, reference: float) -> float | None:
    if not value:
        return None
    match = _LENGTH.match(value)
    if match is None:
        return None
    number, unit = float(match.group(1)), match.group(2)
    if unit == "%":
        return abs(number) / 100 * reference
    return abs(number) * _UNITS.get(unit.lower(), 1.0)


def _transform_scale(value: str) -> float:
    """How much a `transform` can enlarge (1 for translate and rotate)."""
    scale = 1.0
    for name, arguments in _TRANSFORM.findall(value):
        numbers = [float(n) for n in _NUMBER.findall(arguments.encode())] or [1.0]
        if name == "scale":
            scale *= max(abs(n) for n in numbers[:2])
        elif name == "matrix" and len(numbers) >= 4:
            a, b, c, d = numbers[:4]
            scale *= max(math.hypot(a, b), math.hypot(c, d), 1e-9)
        else:  # a skew stretches by up to 1 + |tan|
            scale *= 1 + min(abs(math.tan(math.radians(numbers[0]))), 1e6)
    return min(scale, 1e9)


class _Reader:
    """The expat handlers: builds the element list, counting as it goes and stopping at the first limit."""

    def __init__(self, budget: SvgBudget) -> None:
        self.budget = budget
        self.nodes: list[_Node] = []
        self.ids: dict[str, int] = {}
        self.open: list[int] = []
        self.sheet_refs: list[tuple[str, bool]] = []
        self.count = SvgCount()
        self.in_style = False

    def start(self, name: str, attributes: dict[str, str]) -> None:
        tag = name.rsplit("}", 1)[-1]
        count = self.count
        count.elements += 1
        if count.elements > self.budget.max_elements:
            raise _Stop(f"more than {self.budget.max_elements:,} elements; the limit is {self.budget.max_elements:,}")
        parent = self.open[-1] if self.open else -1
        count.depth = max(count.depth, len(self.open) + 1)
        if count.depth > self.budget.max_depth:
            raise _Stop(f"elements nested more than {self.budget.max_depth} deep; the limit is {self.budget.max_depth}")
        node = _Node(tag, parent)
        index = len(self.nodes)
        self.nodes.append(node)
        if parent >= 0:
            self.nodes[parent].children.append(index)
            if self.nodes[parent].tag == "filter" and tag.startswith("fe"):
                self.nodes[parent].primitives += 1
        self.open.append(index)
        self.in_style = tag == "style"
        local = {key.rsplit("}", 1)[-1]: value for key, value in attributes.items()}
        self._attributes(node, local)
        if index == 0:
            self._root(local)

    def _attributes(self, node: _Node, local: dict[str, str]) -> None:
        if "id" in local:
            self.ids.setdefault(local["id"], len(self.nodes) - 1)
        href = local.get("href", "")
        if href.startswith("#"):
            node.refs.append((href[1:], False))
        for key, value in local.items():
            if "url(" in value:
                mid = key in ("marker", "marker-mid")
                node.refs.extend((ref, mid) for ref in _URL_REF.findall(value))
                if key == "style":
                    node.refs.extend((ref, True) for ref in _MARKER_REF.findall(value))
                if key == "filter":
                    node.filter = next(iter(_URL_REF.findall(value)), "")
                elif key == "style" and "filter" in value:
                    node.filter = next(iter(_FILTER_REF.findall(value)), "")
        for key in ("d", "points"):
            if key in local:
                numbers = _NUMBER.findall(local[key].encode())
                node.segments += len(numbers) // 2 + 1
                if 0 < len(numbers) <= 10_000:  # the extent, for a filter's region; a longer path spans the view
                    values = [float(n) for n in numbers]
                    extent = max(values) - min(values)
                    node.size = (extent, extent)
        viewport = self.count.view_box if self.count.view_box != (0.0, 0.0) else (self.count.width, self.count.height)
        if node.tag in _SIZED:
            node.size = (_length(local.get("width"), viewport[0]) or viewport[0],
                         _length(local.get("height"), viewport[1]) or viewport[1])  # fmt: skip
        elif node.tag == "circle":
            r = _length(local.get("r"), max(viewport)) or 0.0
            node.size = (2 * r, 2 * r)
        elif node.tag == "ellipse":
            node.size = (2 * (_length(local.get("rx"), viewport[0]) or 0.0),
                         2 * (_length(local.get("ry"), viewport[1]) or 0.0))  # fmt: skip
        elif node.tag == "line":
            xs = [_length(local.get(k), viewport[0]) or 0.0 for k in ("x1", "x2")]
            ys = [_length(local.get(k), viewport[1]) or 0.0 for k in ("y1", "y2")]
            node.size = (abs(xs[1] - xs[0]), abs(ys[1] - ys[0]))
        if "transform" in local:
            node.scale = _transform_scale(local["transform"])
        if node.tag in ("svg", "symbol") and "viewBox" in local and node.size is not None:
            box = [abs(float(n)) for n in _NUMBER.findall(local["viewBox"].encode())[2:4]]
            if len(box) == 2 and min(box) > 0:
                node.scale *= max(node.size[0] / box[0], node.size[1] / box[1])
        if node.tag == "filter":
            user_space = local.get("filterUnits") == "userSpaceOnUse"
            reference = viewport if user_space else (1.0, 1.0)
            default = (viewport[0] * _DEFAULT_REGION, viewport[1] * _DEFAULT_REGION) if user_space \
                else (_DEFAULT_REGION, _DEFAULT_REGION)  # fmt: skip
            width = _length(local.get("width"), reference[0])
            height = _length(local.get("height"), reference[1])
            node.region = (default[0] if width is None else width, default[1] if height is None else height, user_space)

    def _root(self, local: dict[str, str]) -> None:
        box = [abs(float(n)) for n in _NUMBER.findall(local.get("viewBox", "").encode())[2:4]]
        count = self.count
        if len(box) == 2 and min(box) > 0:
            count.view_box = (box[0], box[1])
        count.width = _length(local.get("width"), 0.0) or (count.view_box[0] or 100.0)
        count.height = _length(local.get("height"), 0.0) or (count.view_box[1] or 100.0)
        if count.view_box == (0.0, 0.0):
            count.view_box = (count.width, count.height)
        root = self.nodes[0]
        root.scale, root.size = 1.0, count.view_box

    def end(self, _name: str) -> None:
        self.open.pop()
        self.in_style = False

    def text(self, data: str) -> None:
        if not self.open:
            return
        node = self.nodes[self.open[-1]]
        if node.tag in _TEXT:
            node.segments += 4 * len(data.strip())  # a glyph is an outline of a few segments
        elif self.in_style and "url(" in data:
            # A style sheet can give any element the filter, marker or pattern it names: counted on all.
            self.sheet_refs.extend((ref, "marker" in data) for ref in _URL_REF.findall(data))

    def refuse_entities(self, *_args: object) -> None:
        raise _Stop("the SVG declares XML entities, which are refused (a few lines of them can expand to gigabytes)")

    def refuse_external(self, *_args: object) -> int:
        raise _Stop("the SVG refers to an external entity, which is refused")


def _walk(reader: _Reader, budget: SvgBudget) -> str:
    """Follow children and references from the root (memoized, cycles refused); fill the totals."""
    nodes, ids = reader.nodes, reader.ids
    if not nodes:
        return ""
    drawn = [0] * len(nodes)
    segments = [0] * len(nodes)
    work = [0.0] * len(nodes)  # filter pixels in the parent's units squared
    state = [0] * len(nodes)  # 0 new, 1 on the path, 2 done
    stack = [0]
    while stack:
        index = stack[-1]
        node = nodes[index]
        refs = [(ids[ref], mid) for ref, mid in (*node.refs, *reader.sheet_refs) if ref in ids]
        if state[index] == 0:
            state[index] = 1
            for target in (*node.children, *(t for t, _mid in refs)):
                if state[target] == 1:
                    name = next((k for k, v in ids.items() if v == target), node.tag)
                    return f"its references loop (#{name} leads back to itself)"
                if state[target] == 0:
                    stack.append(target)
            continue
        stack.pop()
        if state[index] == 2:
            continue
        state[index] = 2
        vertices = node.segments + 1
        total_drawn, total_segments, total_work = 1, node.segments, 0.0
        for child in node.children:
            total_drawn += drawn[child]
            total_segments += segments[child]
            total_work += work[child]
        for target, mid in refs:
            times = vertices if mid else 1
            total_drawn += times * drawn[target]
            total_segments += times * segments[target]
            total_work += times * work[target]
        if node.filter in ids:
            total_work += _filter_work(node, nodes[ids[node.filter]], reader.count)
        drawn[index] = min(total_drawn, _CAP)  # a chain of fan-outs can reach 10**1000
        segments[index] = min(total_segments, _CAP)
        work[index] = min(total_work * node.scale * node.scale, 1e30)
    count = reader.count
    count.drawn, count.segments, count.filter_work = drawn[0], segments[0], work[0]
    return ""


def _filter_work(node: _Node, filter_node: _Node, count: SvgCount) -> float:
    """Primitives times region area (the element's user units) for one application of a filter."""
    width, height, user_space = filter_node.region
    if not user_space:
        box = node.size or count.view_box
        width, height = width * box[0], height * box[1]
    return max(filter_node.primitives, 1) * width * height


def count_svg(data: bytes, budget: SvgBudget) -> SvgCount:
    """Read `data` and count what drawing it costs; stops at the first limit of `budget` it meets."""
    count = SvgCount()
    if len(data) > budget.max_bytes:
        count.problem = f"the SVG is {len(data):,} bytes; the limit is {budget.max_bytes:,}"
        return count
    reader = _Reader(budget)
    parser = expat.ParserCreate(namespace_separator="}")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = reader.refuse_entities
    parser.ExternalEntityRefHandler = reader.refuse_external
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    try:
        parser.Parse(data, True)
    except _Stop as stop:
        reader.count.problem = str(stop)
        return reader.count
    except expat.ExpatError as exc:
        reader.count.invalid = f"the SVG does not parse: {expat.errors.messages.get(exc.code, str(exc))}"
        return reader.count
    count = reader.count
    count.problem = _walk(reader, budget)
    return count


def _many(number: int) -> str:
    return f"more than {_CAP:,}" if number >= _CAP else f"{number:,}"


def svg_problem(count: SvgCount, budget: SvgBudget, *, side: float) -> str:
    """Which budget `count` is over when drawn `side` pixels along its longer side, as a phrase; "" if none."""
    if count.problem:
        return count.problem
    if count.drawn > budget.max_drawn:
        return (f"<use> and url(#...) references expand to {_many(count.drawn)} elements drawn; the limit is"
                f" {budget.max_drawn:,}")  # fmt: skip
    if count.segments > budget.max_segments:
        return (f"about {_many(count.segments)} path segments and characters to draw; the limit is"
                f" {budget.max_segments:,}")  # fmt: skip
    pixels = count.filter_pixels(side)
    if pixels > budget.max_filter_pixels:
        return (f"filters over about {pixels:,} pixels (primitives times region); the limit is"
                f" {budget.max_filter_pixels:,}")  # fmt: skip
    return ""
