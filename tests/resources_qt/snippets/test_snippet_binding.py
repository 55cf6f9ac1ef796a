"""bind_project and snippet_resource: specs become resources whose readers and completions run in the pool."""

from __future__ import annotations

import asyncio

import pytest

from resources_qt.errors import INTERNAL_ERROR, OPERATION_FAILED, ReaderFailedError, ReaderMissingError
from resources_qt.project import Project, ResourceSpec, ServerSettings
from resources_qt.snippets import SnippetPool, bind_project, snippet_resource

ARTICLE = "def read(uri, params):\n    return f\"# {TITLES[params['slug']]}\\n\"\n"
SLUGS = "def complete(name, value, context):\n    return [s for s in TITLES if s.startswith(value)]\n"


def _project() -> Project:
    return Project(
        server=ServerSettings(name="kb", reader_timeout=3.0, workers=2, memory_limit_mb=512),
        prelude="TITLES = {'install': 'Installing', 'refunds': 'Refunds'}\n",
        resources=[
            ResourceSpec(name="index", uri="kb://index", mime_type="application/json",
                         reader="def read(uri, params):\n    return sorted(TITLES)\n"),
            ResourceSpec(name="article", uri_template="kb://{section}/{slug}", mime_type="text/markdown",
                         completions={"section": ["billing", "setup"]}, complete=SLUGS, reader=ARTICLE),
            ResourceSpec(name="draft", uri="kb://draft", reader="   \n"),
        ],
    )  # fmt: skip


def test_specs_become_resources_served_by_the_pool(pool: SnippetPool) -> None:
    resources = bind_project(_project(), pool)
    assert [r.name for r in resources] == ["index", "article", "draft"]
    assert (pool.timeout, pool.memory_limit_mb) == (3.0, 512)

    async def reads() -> tuple[str | None, str | None, str]:
        index = await resources.get("index").read("kb://index", {})  # type: ignore[union-attr]
        match = resources.resolve("kb://billing/refunds")
        assert match is not None and match.resource.name == "article"
        article = await match.resource.read("kb://billing/refunds", match.params)
        return index[0].text, article[0].text, article[0].mime_type

    index, article, mime = asyncio.run(reads())
    assert index == '[\n  "install",\n  "refunds"\n]'
    assert (article, mime) == ("# Refunds\n", "text/markdown")


def test_empty_reader_answers_internal_error(pool: SnippetPool) -> None:
    resources = bind_project(_project(), pool, apply_settings=False)
    draft = resources.get("draft")
    assert draft is not None
    with pytest.raises(ReaderMissingError) as caught:
        asyncio.run(draft.read("kb://draft", {}))
    assert caught.value.code == INTERNAL_ERROR
    assert "has no reader" in caught.value.message


def test_completions_come_from_lists_and_the_complete_snippet(pool: SnippetPool) -> None:
    resources = bind_project(_project(), pool)
    article = resources.get("article")
    assert article is not None
    assert article.completions["section"] == ["billing", "setup"]
    complete = article.completions["slug"]
    assert callable(complete)
    assert asyncio.run(complete("slug", "re", {"section": "billing"})) == ["refunds"]


def test_reader_failure_keeps_its_code_through_resource_read(pool: SnippetPool) -> None:
    spec = ResourceSpec(name="boom", uri="t://boom", reader="def read(uri, params):\n    raise ValueError('nope')\n")
    resource = snippet_resource(spec, pool)
    with pytest.raises(ReaderFailedError) as caught:
        asyncio.run(resource.read("t://boom", {}))
    assert caught.value.code == OPERATION_FAILED
    assert caught.value.message == "Resource reader failed for URI t://boom: ValueError: nope (line 2)"
