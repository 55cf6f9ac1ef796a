"""Template resolution: Resources.resolve versus the SDK MCPServer's ResourceManager lookup."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from mcp.server.mcpserver.resources.resource_manager import ResourceManager
from mcp.server.mcpserver.resources.templates import ResourceSecurityError

from bench.common import Row, median
from resources_qt.collection import Resources

SIZES = (100, 1_000, 10_000)


def template_for(i: int) -> tuple[str, dict[str, str]]:
    """The i-th template of a realistic mix of shapes, and values for one URI it matches."""
    shape = i % 4
    if shape == 0:
        return f"db://tables/t{i}/rows/{{id}}", {"id": str(i * 7)}
    if shape == 1:
        return f"app{i}://{{tenant}}/items/{{item}}", {"tenant": "acme", "item": f"x{i}"}
    if shape == 2:
        return f"file:///projects/p{i}/{{+path}}", {"path": f"src/m{i}.py"}
    return f"api://v1/u{i}/search{{?q,page}}", {"q": "term", "page": "2"}


def _reader(uri: str, params: object) -> str:
    return uri


def build_ours(n: int, shared_prefix: bool = False) -> Resources:
    resources = Resources()
    for i in range(n):
        template = f"x://{{a}}/p{i}/{{b}}" if shared_prefix else template_for(i)[0]
        resources.register_template_resource(f"t{i}", template, "", "text/plain", _reader)
    return resources


def build_sdk(n: int, shared_prefix: bool = False) -> ResourceManager:
    manager = ResourceManager()

    def fn(**params: str) -> str:
        return "x"

    for i in range(n):
        template = f"x://{{a}}/p{i}/{{b}}" if shared_prefix else template_for(i)[0]
        names = [part.strip("{}+?").split(",") for part in template.split("{")[1:]]
        args = [a.split("}")[0] for group in names for a in group]
        # The SDK insists that the function's parameters equal the template's variables.
        ns: dict[str, object] = {}
        exec(f"def f_{i}({', '.join(args)}):\n    return 'x'\n", ns)
        manager.add_template(ns[f"f_{i}"], template, name=f"t{i}")  # type: ignore[arg-type]
    del fn
    return manager


def sdk_lookup(manager: ResourceManager, uri: str) -> tuple[object, dict[str, str | list[str]]] | None:
    """The template half of `ResourceManager.get_resource`, verbatim minus the reader call."""
    if (resource := manager._resources.get(uri)) is not None:
        return resource, {}
    for template in manager._templates.values():
        try:
            params = template.matches(uri)
        except ResourceSecurityError:
            return None
        if params is not None:
            return template, params
    return None


def sample_uris(n: int, count: int, rng: random.Random, shared_prefix: bool = False) -> list[str]:
    from mcp.shared.uri_template import UriTemplate

    uris = []
    for _ in range(count):
        i = rng.randrange(n)
        if shared_prefix:
            uris.append(f"x://a{i}/p{i}/b")
            continue
        template, values = template_for(i)
        uris.append(UriTemplate.parse(template).expand(values))
    return uris


def _time_per_call(fn: Callable[[str], object], uris: list[str]) -> float:
    start = time.perf_counter()
    for uri in uris:
        if fn(uri) is None:
            raise AssertionError(f"{uri} did not resolve")
    return (time.perf_counter() - start) / len(uris) * 1e6


def measure(n: int, *, quick: bool, shared_prefix: bool = False) -> tuple[float, float, float]:
    """(ours us, sdk us, median per-pair speedup) for n templates, alternating A B A B."""
    rng = random.Random(n)
    ours, sdk = build_ours(n, shared_prefix), build_sdk(n, shared_prefix)
    # Check both agree on what the URIs resolve to before timing anything.
    for uri in sample_uris(n, 50, rng, shared_prefix):
        mine, theirs = ours.resolve(uri), sdk_lookup(sdk, uri)
        assert mine is not None and theirs is not None, uri
        assert mine.resource.uri_template == theirs[0].uri_template, uri  # type: ignore[attr-defined]
    pairs = 2 if quick else 5
    ours_count = 20_000 if not quick else 5_000
    sdk_count = max(20, min(5_000, 2_000_000 // max(n, 1))) // (2 if quick else 1)
    ours_us, sdk_us, ratios = [], [], []
    for _ in range(pairs):
        a = _time_per_call(ours.resolve, sample_uris(n, ours_count, rng, shared_prefix))
        b = _time_per_call(lambda u: sdk_lookup(sdk, u), sample_uris(n, sdk_count, rng, shared_prefix))
        ours_us.append(a)
        sdk_us.append(b)
        ratios.append(b / a)
    return median(ours_us), median(sdk_us), median(ratios)


def run(quick: bool) -> list[Row]:
    rows: list[Row] = []
    extra: dict[str, float] = {}
    detail_parts = []
    ours10k = speed10k = 0.0
    for n in SIZES:
        ours_us, sdk_us, speedup = measure(n, quick=quick)
        extra[f"template_resolve_us_{n}"] = round(ours_us, 2)
        extra[f"template_sdk_us_{n}"] = round(sdk_us, 2)
        extra[f"template_speedup_vs_sdk_{n}"] = round(speedup, 1)
        detail_parts.append(f"{n}: ours {ours_us:.1f} us, SDK {sdk_us:.1f} us, x{speedup:.0f}")
        if n == 10_000:
            ours10k, speed10k = ours_us, speedup
    worst_n = 1_000 if quick else 10_000  # the SDK takes about 2 ms to register each template
    worst_ours, worst_sdk, worst_speed = measure(worst_n, quick=True, shared_prefix=True)
    extra["template_resolve_us_shared_prefix"] = round(worst_ours, 2)
    detail_parts.append(
        f"worst case, every template in one prefix bucket ({worst_n}): "
        f"ours {worst_ours:.0f} us, SDK {worst_sdk:.0f} us, x{worst_speed:.1f}"
    )
    detail = "; ".join(detail_parts)
    rows.append(Row("template_resolve_us_10k", "template resolve, 10k templates", round(ours10k, 2), "us",
                    "< 50 us", ours10k < 50, detail, extra))
    rows.append(Row("template_speedup_vs_sdk_10k", "template speed-up vs SDK, 10k", round(speed10k, 1), "x",
                    ">= 20x", speed10k >= 20, "median of per-pair ratios (A B A B)"))
    return rows
