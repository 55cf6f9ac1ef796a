"""ListingCache with instances: they follow the collection's direct resources, paging resumes by name."""

from __future__ import annotations

from resources_qt.collection import Resources
from resources_qt.resource import Resource
from resources_qt.server.paging import ListingCache


def _instances(*ids: int) -> list[Resource]:
    return [Resource(name=f"t {i}", uri=f"t://{i}", reader=lambda uri: "") for i in ids]


def _pages(listing: ListingCache, size: int) -> list[str]:
    uris: list[str] = []
    cursor: str | None = None
    while True:
        page, cursor = listing.direct_page(cursor, size)
        uris.extend(str(r.uri) for r in page)
        if cursor is None:
            return uris


def test_instances_are_listed_after_the_direct_resources_and_never_enter_the_collection() -> None:
    resources = Resources()
    resources.register_direct_resource("d", "d://1", "", "text/plain", lambda uri: "")
    resources.register_template_resource("t", "t://{id}", "", "text/plain", lambda uri, params: "")
    listing = ListingCache(resources)
    version = resources.version
    listing.set_instances("t", _instances(1, 2, 3))
    assert _pages(listing, 2) == ["d://1", "t://1", "t://2", "t://3"]
    assert resources.version == version and len(resources) == 2
    templates, _ = listing.template_page(None, 10)
    assert [t.uri_template for t in templates] == ["t://{id}"]


def test_paging_resumes_after_the_last_item_sent_while_instances_change() -> None:
    resources = Resources()
    resources.register_template_resource("t", "t://{id}", "", "text/plain", lambda uri, params: "")
    listing = ListingCache(resources)
    listing.set_instances("t", _instances(1, 2, 3, 4))
    first, cursor = listing.direct_page(None, 2)
    assert [r.uri for r in first] == ["t://1", "t://2"]
    listing.set_instances("t", _instances(0, 1, 2, 3, 4))  # one appears before the cursor
    rest, cursor = listing.direct_page(cursor, 10)
    assert [str(r.uri) for r in rest] == ["t://3", "t://4"] and cursor is None


def test_a_collection_resource_wins_over_an_instance_with_its_uri_and_gone_templates_drop() -> None:
    resources = Resources()
    resources.register_direct_resource("special", "t://2", "", "text/plain", lambda uri: "")
    resources.register_template_resource("t", "t://{id}", "", "text/plain", lambda uri, params: "")
    listing = ListingCache(resources)
    listing.set_instances("t", _instances(1, 2))
    assert _pages(listing, 10) == ["t://2", "t://1"]
    listing.retain(set())
    assert _pages(listing, 10) == ["t://2"]
