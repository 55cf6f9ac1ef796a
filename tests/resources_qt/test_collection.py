"""The collection: registration rules, change callbacks, lookups, direct-wins and the list split."""

from __future__ import annotations

import asyncio
import threading

import pytest

from resources_qt import Match, Resource, ResourceContent, Resources, ValidationError


def settings_reader(uri: str) -> ResourceContent:
    return ResourceContent.from_text(uri, "application/json", "{}")


def article_reader(uri: str, params: dict[str, str]) -> str:
    return f"# {params['section']}/{params['slug']}"


def knowledge_base() -> Resources:
    resources = Resources()
    resources.register_direct_resource(
        "kb_index", "kb://articles/index", "Every article", "application/json", settings_reader
    )
    resources.register_template_resource(
        "kb_article", "kb://articles/{section}/{slug}", "One article", "text/markdown", article_reader
    )
    return resources


# -- registration -------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (
            lambda r: r.register_direct_resource("", "x://1", "", "", settings_reader),
            "name must not be empty",
        ),
        (lambda r: r.register_direct_resource("n", "", "", "", settings_reader), "URI must not be empty"),
        (lambda r: r.register_direct_resource("n", "x://1", "", "", None), "has no reader"),
        (
            lambda r: r.register_template_resource("", "x://{a}", "", "", settings_reader),
            "name must not be empty",
        ),
        (
            lambda r: r.register_template_resource("n", "", "", "", settings_reader),
            "URI template must not be empty",
        ),
        (lambda r: r.register_template_resource("n", "x://{a}", "", "", None), "has no reader"),
        (
            lambda r: r.register_template_resource("n", "x://{a", "", "", settings_reader),
            "Invalid URI template",
        ),
        (lambda r: r.register_direct_resource("", "", "", "", None), "name must not be empty"),
        (lambda r: r.add_resource(Resource(name="n", uri="x://1")), "has no reader"),
    ],
)
def test_bad_registrations_are_invalid_params(call: object, problem: str) -> None:
    resources = Resources()
    with pytest.raises(ValidationError) as caught:
        call(resources)  # type: ignore[operator]
    assert caught.value.code == -32602
    assert problem in caught.value.message
    assert len(resources) == 0


def test_duplicates_are_refused() -> None:
    resources = knowledge_base()
    with pytest.raises(ValidationError, match="named 'kb_index' already exists"):
        resources.register_direct_resource("kb_index", "kb://other", "", "", settings_reader)
    with pytest.raises(ValidationError, match="already declared by 'kb_index'"):
        resources.register_direct_resource("other", "kb://articles/index", "", "", settings_reader)
    with pytest.raises(ValidationError, match="already declared by 'kb_article'"):
        resources.register_template_resource(
            "other", "kb://articles/{section}/{slug}", "", "", settings_reader
        )
    assert len(resources) == 2


def test_add_resource_stores_a_copy() -> None:
    resources = Resources()
    built = Resource.builder().name("manual").uri("docs://manual").reader(settings_reader).build()
    stored = resources.add_resource(built)
    assert stored is not built and resources.get("manual") is stored
    built.title = "changed after adding"
    built.uri = "docs://elsewhere"
    assert stored.title == "" and resources.find_by_uri("docs://manual") is stored
    assert resources.find_by_uri("docs://elsewhere") is None


# -- change callbacks -----------------------------------------------------------


def test_callbacks_fire_on_add_and_remove_only() -> None:
    resources = Resources()
    events: list[tuple[str, str]] = []
    resources.add_listener(lambda kind, resource: events.append((kind, resource.name)))
    resources.register_direct_resource("a", "x://a", "", "", settings_reader)
    resources.register_template_resource("t", "x://t/{id}", "", "", settings_reader)
    resources.add_resource(Resource(name="b", uri="x://b", reader=settings_reader))
    assert events == [("added", "a"), ("added", "t"), ("added", "b")]

    # In-place edits and replace() are not list changes, as in the seed.
    stored = resources.get("a")
    assert stored is not None
    stored.title = "New title"
    stored.description = "edited"
    resources.replace("b", Resource(name="b2", uri="x://b2", reader=settings_reader))
    assert events == [("added", "a"), ("added", "t"), ("added", "b")]

    resources.remove("a")
    resources.clear()
    assert events[3:] == [("removed", "a"), ("removed", "t"), ("removed", "b2")]


def test_failed_registration_fires_nothing_and_listeners_can_unsubscribe() -> None:
    resources = knowledge_base()
    events: list[str] = []
    unsubscribe = resources.add_listener(lambda kind, resource: events.append(kind))
    with pytest.raises(ValidationError):
        resources.register_direct_resource("kb_index", "x://dup", "", "", settings_reader)
    unsubscribe()
    unsubscribe()  # idempotent
    resources.register_direct_resource("later", "x://later", "", "", settings_reader)
    assert events == []


@pytest.mark.allow_error_logs  # the logged error is what the test provokes
def test_a_failing_listener_neither_blocks_the_change_nor_other_listeners(
    caplog: pytest.LogCaptureFixture,
) -> None:
    resources = Resources()
    seen: list[str] = []

    def broken(kind: str, resource: Resource) -> None:
        raise RuntimeError("listener bug")

    resources.add_listener(broken)
    resources.add_listener(lambda kind, resource: seen.append(resource.name))
    resources.register_direct_resource("a", "x://a", "", "", settings_reader)
    assert seen == ["a"] and resources.get("a") is not None
    assert "listener" in caplog.text and "failed" in caplog.text


def test_version_grows_on_every_change_including_in_place_edits() -> None:
    resources = Resources()
    versions = [resources.version]
    resources.register_direct_resource("a", "x://a", "", "", settings_reader)
    versions.append(resources.version)
    stored = resources.get("a")
    assert stored is not None
    stored.uri = "x://moved"
    versions.append(resources.version)
    resources.replace("a", Resource(name="a", uri="x://a", reader=settings_reader))
    versions.append(resources.version)
    resources.remove("a")
    versions.append(resources.version)
    assert versions == sorted(set(versions))


# -- lookups ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["find_by_uri", "find_matching_template", "resolve", "matches"])
@pytest.mark.parametrize("uri", ["", "   "])
def test_lookups_reject_an_empty_uri(method: str, uri: str) -> None:
    with pytest.raises(ValidationError) as caught:
        getattr(knowledge_base(), method)(uri)
    assert caught.value.code == -32602
    assert "URI must not be empty" in caught.value.message and method in caught.value.message


def test_find_by_uri_consults_direct_resources_only() -> None:
    resources = knowledge_base()
    found = resources.find_by_uri("kb://articles/index")
    assert found is not None and found.name == "kb_index"
    assert resources.find_by_uri("kb://articles/faq/setup") is None
    assert resources.find_by_uri("kb://articles/{section}/{slug}") is None


def test_find_matching_template_consults_templates_only() -> None:
    resources = knowledge_base()
    match = resources.find_matching_template("kb://articles/faq/setup")
    article = resources.get("kb_article")
    assert article is not None
    assert match == Match(article, {"section": "faq", "slug": "setup"})
    assert match is not None and match.is_template
    assert resources.find_matching_template("kb://articles/index") is None
    assert resources.find_matching_template("kb://articles") is None


def test_direct_wins_over_a_template_that_also_matches() -> None:
    resources = Resources()
    resources.register_template_resource("ticket", "tickets://{id}/attachment", "", "", settings_reader)
    resources.register_direct_resource("special", "tickets://0/attachment", "", "", settings_reader)
    match = resources.resolve("tickets://0/attachment")
    assert match is not None and match.resource.name == "special" and match.params == {}
    other = resources.resolve("tickets://7/attachment")
    assert other is not None and other.resource.name == "ticket" and other.params == {"id": "7"}
    assert [m.resource.name for m in resources.matches("tickets://0/attachment")] == ["special", "ticket"]
    assert resources.resolve("tickets://7") is None


def test_list_split_between_direct_resources_and_templates() -> None:
    resources = Resources()
    resources.register_template_resource("t1", "a://{x}", "", "", settings_reader)
    resources.register_direct_resource("d1", "a://one", "", "", settings_reader)
    resources.register_template_resource("t2", "b://{x}/{y}", "", "", settings_reader)
    resources.register_direct_resource("d2", "b://two", "", "", settings_reader)
    assert [r.name for r in resources.direct_resources()] == ["d1", "d2"]
    assert [r.name for r in resources.templates()] == ["t1", "t2"]
    assert all(not r.is_template for r in resources.direct_resources())
    assert [r.name for r in resources] == ["t1", "d1", "t2", "d2"]


def test_resolution_order_across_templates() -> None:
    resources = Resources()
    for name, template in [
        ("anything", "kb://{+path}"),
        ("article", "kb://articles/{section}/{slug}"),
        ("by_slug", "kb://articles/{section}/{slug}{?lang}"),
        ("featured", "kb://articles/featured/{slug}"),
    ]:
        resources.register_template_resource(name, template, "", "", settings_reader)

    def resolved(uri: str) -> str | None:
        match = resources.resolve(uri)
        return match.resource.name if match else None

    assert resolved("kb://articles/featured/intro") == "featured"  # longest literal prefix
    assert resolved("kb://articles/faq/intro") == "article"  # same prefix, fewer variables
    assert resolved("kb://articles/faq/intro?lang=de") == "by_slug"  # the only one that accepts a query
    assert resolved("kb://elsewhere/x/y") == "anything"
    resources.remove("article")
    assert resolved("kb://articles/faq/intro") == "by_slug"


# -- remove, replace, in-place edits ---------------------------------------------


def test_remove_by_name_uri_or_template() -> None:
    resources = knowledge_base()
    resources.register_direct_resource("other", "x://other", "", "", settings_reader)
    removed = resources.remove("kb://articles/index")
    assert removed is not None and removed.name == "kb_index"
    removed = resources.remove("kb://articles/{section}/{slug}")
    assert removed is not None and removed.name == "kb_article"
    assert resources.resolve("kb://articles/a/b") is None
    removed = resources.remove("other")
    assert removed is not None and removed.uri == "x://other"
    assert resources.remove("never-there") is None
    assert len(resources) == 0


def test_replace_keeps_the_position_and_checks_uniqueness() -> None:
    resources = knowledge_base()
    resources.register_direct_resource("last", "x://last", "", "", settings_reader)
    new = resources.replace("kb_index", Resource(name="kb_home", uri="kb://home", reader=settings_reader))
    assert [r.name for r in resources] == ["kb_home", "kb_article", "last"]
    assert resources.find_by_uri("kb://home") is new and resources.find_by_uri("kb://articles/index") is None
    with pytest.raises(ValidationError, match="already exists"):
        resources.replace("kb_home", Resource(name="last", uri="x://new", reader=settings_reader))
    with pytest.raises(ValidationError, match="No resource named"):
        resources.replace("ghost", Resource(name="ghost", uri="x://ghost", reader=settings_reader))


def test_in_place_identity_edits_are_reindexed() -> None:
    resources = knowledge_base()
    article = resources.get("kb_article")
    assert article is not None
    article.uri_template = "kb://docs/{section}/{slug}"
    match = resources.resolve("kb://docs/faq/setup")
    assert match is not None and match.resource is article
    assert resources.resolve("kb://articles/faq/setup") is None
    article.name = "kb_doc"
    assert resources.get("kb_doc") is article and "kb_article" not in resources
    removed = resources.remove("kb_doc")
    assert removed is article
    article.name = "detached"  # no longer held: the collection is not told
    assert resources.get("detached") is None


def test_a_resolved_read_goes_through_the_reader() -> None:
    resources = knowledge_base()
    match = resources.resolve("kb://articles/faq/setup")
    assert match is not None
    [content] = asyncio.run(match.resource.read("kb://articles/faq/setup", match.params))
    assert (content.text, content.mime_type) == ("# faq/setup", "text/markdown")


def test_concurrent_registration_and_resolution() -> None:
    resources = Resources()
    errors: list[BaseException] = []

    def register(offset: int) -> None:
        try:
            for i in range(offset, offset + 200):
                resources.register_template_resource(f"t{i}", f"kb://s{i}/{{slug}}", "", "", settings_reader)
                resources.register_direct_resource(f"d{i}", f"kb://d{i}", "", "", settings_reader)
        except Exception as exc:
            errors.append(exc)

    def resolve() -> None:
        try:
            for i in range(2000):
                match = resources.resolve(f"kb://s{i % 800}/x")
                assert match is None or match.resource.name == f"t{i % 800}"
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=register, args=(k * 200,)) for k in range(4)]
    threads += [threading.Thread(target=resolve) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(resources) == 1600 and len(resources.templates()) == 800


def test_a_non_ascii_address_is_refused_with_its_percent_encoded_form_and_both_forms_resolve():
    from resources_qt.errors import ValidationError

    resources = Resources()
    with pytest.raises(ValidationError) as info:
        resources.register_direct_resource("u", "test://ünïcode", "U", "text/plain", lambda uri: "u")
    assert "test://%C3%BCn%C3%AFcode" in info.value.message and info.value.field == "uri"
    resources.register_direct_resource("u", "test://%C3%BCn%C3%AFcode", "U", "text/plain", lambda uri: "u")
    resources.register_template_resource("w", "wiki://{page}", "W", "text/plain", lambda uri, params: "w")
    assert resources.resolve("test://ünïcode").resource.name == "u"  # type: ignore[union-attr]
    assert resources.resolve("test://%C3%BCn%C3%AFcode").resource.name == "u"  # type: ignore[union-attr]
    match = resources.resolve("wiki://Zürich")
    assert match is not None and match.params == {"page": "Zürich"}
