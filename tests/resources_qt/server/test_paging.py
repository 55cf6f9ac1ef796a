"""ListingCache splits lazily: pages match the whole split, at every page size, through edits and concurrent changes."""

from __future__ import annotations

import threading

from resources_qt.collection import Resources
from resources_qt.resource import Resource
from resources_qt.server.paging import FIRST_CHUNK, ListingCache


def _reader(uri: str) -> str:
    return ""


def _mixed(count: int, *, every: int = 7) -> Resources:
    """`count` resources, every `every`-th a template, in registration order."""
    resources = Resources()
    for i in range(count):
        if i % every == every - 1:
            resources.register_template_resource(f"t{i}", f"t{i}://{{id}}", "", "text/plain", _reader)
        else:
            resources.register_direct_resource(f"r{i}", f"x://{i}", "", "text/plain", _reader)
    return resources


def _walk(cache: ListingCache, kind: str, size: int) -> list[str]:
    names: list[str] = []
    cursor: str | None = None
    while True:
        if kind == "d":
            direct, cursor = cache.direct_page(cursor, size)
            names.extend(r.name for r in direct)
        else:
            templates, cursor = cache.template_page(cursor, size)
            names.extend(t.name for t in templates)
        if cursor is None:
            return names


def test_pages_of_a_lazy_split_are_the_whole_split_at_every_page_size() -> None:
    count = FIRST_CHUNK * 3 + 5  # several chunk reads, ending mid-chunk
    resources = _mixed(count)
    direct = [r.name for r in resources.direct_resources()]
    templates = [r.name for r in resources.templates()]
    for size in (1, 7, 100, FIRST_CHUNK, len(direct), len(direct) + 1):
        cache = ListingCache(resources)
        assert _walk(cache, "d", size) == direct, size
        assert _walk(cache, "t", size) == templates, size


def test_the_template_listing_can_come_first_and_the_direct_one_still_pages_from_its_start() -> None:
    resources = _mixed(FIRST_CHUNK * 2, every=3)
    cache = ListingCache(resources)
    first_templates, _ = cache.template_page(None, 5)
    assert [t.name for t in first_templates] == [r.name for r in resources.templates()[:5]]
    assert _walk(cache, "d", 50) == [r.name for r in resources.direct_resources()]


def test_an_exact_last_page_has_no_cursor_and_an_empty_collection_lists_nothing() -> None:
    resources = _mixed(10, every=100)
    cache = ListingCache(resources)
    page, cursor = cache.direct_page(None, 10)
    assert len(page) == 10 and cursor is None
    assert ListingCache(Resources()).direct_page(None, 10) == ([], None)


def test_paging_far_into_a_listing_resumes_after_an_edit_near_its_start() -> None:
    resources = _mixed(FIRST_CHUNK * 4, every=1000)
    cache = ListingCache(resources)
    cursor: str | None = None
    seen: list[str] = []
    for _ in range(5):
        page, cursor = cache.direct_page(cursor, 100)
        seen.extend(r.name for r in page)
    resources.remove("r3")  # shifts every position the cursor knows
    resources.register_direct_resource("late", "x://late", "", "text/plain", _reader)
    rest: list[str] = []
    while cursor is not None:
        page, cursor = cache.direct_page(cursor, 100)
        rest.extend(r.name for r in page)
    expected = [r.name for r in resources.direct_resources()]
    assert rest == expected[expected.index(seen[-1]) + 1:]


def test_concurrent_additions_while_paging_neither_skip_nor_repeat_the_resources_that_stay() -> None:
    resources = _mixed(FIRST_CHUNK * 8, every=1000)
    stable = [r.name for r in resources.direct_resources()]
    cache = ListingCache(resources)
    stop = threading.Event()

    def edit() -> None:
        i = 0
        while not stop.is_set():
            resources.register_direct_resource(f"new{i}", f"x://new{i}", "", "text/plain", _reader)
            resources.remove(f"new{i}")
            i += 1

    editor = threading.Thread(target=edit)
    editor.start()
    try:
        listed = _walk(cache, "d", 37)
    finally:
        stop.set()
        editor.join()
    kept = [name for name in listed if not name.startswith("new")]
    assert kept == stable


def test_a_renamed_resource_is_listed_under_its_new_name() -> None:
    resources = Resources()
    for i in range(3):
        resources.register_direct_resource(f"r{i}", f"x://{i}", "", "text/plain", _reader)
    cache = ListingCache(resources)
    assert _walk(cache, "d", 10) == ["r0", "r1", "r2"]
    held = resources.get("r1")
    assert held is not None
    held.name = "renamed"  # an in-place identity edit moves the version without a callback
    assert _walk(cache, "d", 10) == ["r0", "renamed", "r2"]
    replacement = Resource(name="r2", uri_template="x://t/{id}", reader=_reader)
    resources.replace("r2", replacement)  # a direct resource becomes a template in place
    assert _walk(cache, "d", 10) == ["r0", "renamed"]
    assert _walk(cache, "t", 10) == ["r2"]
