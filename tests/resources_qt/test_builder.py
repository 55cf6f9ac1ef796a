"""The seed's builder rules: fluent calls, URI xor template, and build() validating before it returns."""

from __future__ import annotations

import mcp_types as types
import pytest

from resources_qt import Annotations, Icon, Resource, ResourceContent, ValidationError


def read_manual(uri: str) -> ResourceContent:
    return ResourceContent.from_text(uri, "text/markdown", "# Manual")


def test_every_method_returns_the_builder_and_build_gives_the_resource() -> None:
    resource = (
        Resource.builder()
        .name("user_manual")
        .title("User manual")
        .description("The application user manual, in Markdown")
        .uri("docs://manual/index.md")
        .mime_type("text/markdown")
        .reader(read_manual)
        .build()
    )
    assert (resource.name, resource.title, resource.uri, resource.mime_type) == (
        "user_manual",
        "User manual",
        "docs://manual/index.md",
        "text/markdown",
    )
    assert resource.description == "The application user manual, in Markdown"
    assert not resource.is_template and resource.reader is read_manual


@pytest.mark.parametrize("order", ["uri first", "template first"])
def test_uri_and_template_together_raise(order: str) -> None:
    builder = Resource.builder().name("both")
    with pytest.raises(ValidationError, match="Cannot set both URI and URITemplate") as caught:
        if order == "uri first":
            builder.uri("kb://articles/index").uri_template("kb://articles/{slug}")
        else:
            builder.uri_template("kb://articles/{slug}").uri("kb://articles/index")
    assert caught.value.code == -32602


@pytest.mark.parametrize(
    ("builder", "problem"),
    [
        (Resource.builder().uri("x://1").reader(read_manual), "name must not be empty"),
        (Resource.builder().name("   ").uri("x://1").reader(read_manual), "name must not be empty"),
        (Resource.builder().name("n").reader(read_manual), "needs a URI or a URI template"),
        (Resource.builder().name("n").uri("x://1"), "has no reader"),
        (Resource.builder().name("n").uri_template("x://{id}"), "has no reader"),
        (Resource.builder().name("n").uri_template("x://{id").reader(read_manual), "Invalid URI template"),
        (Resource.builder().name("n").uri_template("x://plain").reader(read_manual), "has no {variable}"),
    ],
)
def test_build_refuses_a_half_declared_resource(builder: object, problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        builder.build()  # type: ignore[attr-defined]
    assert caught.value.code == -32602
    assert problem in caught.value.message


def test_empty_uri_or_template_is_refused_when_set() -> None:
    with pytest.raises(ValidationError, match="URI must not be empty"):
        Resource.builder().uri("")
    with pytest.raises(ValidationError, match="URI template must not be empty"):
        Resource.builder().uri_template("")


def test_a_non_callable_reader_is_refused() -> None:
    with pytest.raises(ValidationError, match="callable") as caught:
        Resource.builder().reader("def read(uri): ...")  # type: ignore[arg-type]
    assert caught.value.code == -32602


def test_build_hands_over_and_starts_afresh() -> None:
    builder = Resource.builder().name("a").uri("x://a").reader(read_manual)
    first = builder.build()
    with pytest.raises(ValidationError):
        builder.build()  # the builder no longer holds the built instance
    second = builder.name("b").uri("x://b").reader(read_manual).build()
    assert first is not second and first.name == "a"


def test_several_add_icon_calls_declare_several_icons() -> None:
    resource = (
        Resource.builder()
        .name("kb_article")
        .title("Knowledge base article")
        .uri_template("kb://articles/{section}/{slug}")
        .mime_type("text/markdown")
        .add_icon("https://cdn.example.com/icons/article-24.png", "image/png", "24x24")
        .add_icon("https://cdn.example.com/icons/article-48.png", "image/png", ["48x48", "96x96"])
        .add_icon("https://cdn.example.com/icons/article.svg")
        .reader(read_manual)
        .build()
    )
    assert resource.icons == [
        Icon("https://cdn.example.com/icons/article-24.png", "image/png", ("24x24",)),
        Icon("https://cdn.example.com/icons/article-48.png", "image/png", ("48x48", "96x96")),
        Icon("https://cdn.example.com/icons/article.svg"),
    ]
    listing = resource.to_mcp()
    assert isinstance(listing, types.ResourceTemplate)
    dumped = listing.model_dump(by_alias=True, exclude_none=True)
    assert dumped["icons"][0] == {
        "src": "https://cdn.example.com/icons/article-24.png",
        "mimeType": "image/png",
        "sizes": ["24x24"],
    }
    assert dumped["icons"][2] == {"src": "https://cdn.example.com/icons/article.svg"}
    with pytest.raises(ValidationError, match="Icon source"):
        Resource.builder().add_icon("")
    assert Icon("a.png", sizes="16x16 32x32") == Icon("a.png", sizes=("16x16", "32x32"))  # type: ignore[arg-type]
    assert hash(Icon("a.png", sizes=["16x16"])) == hash(Icon("a.png", sizes=("16x16",)))  # type: ignore[arg-type]


def test_annotations_size_completions_and_cache() -> None:
    resource = (
        Resource.builder()
        .name("settings")
        .uri("config://application/settings")
        .annotations(audience=["user", "assistant"], priority=0.8, last_modified="2025-01-12T15:00:58Z")
        .size(1234)
        .cache(60_000, "public")
        .reader(read_manual)
        .build()
    )
    assert resource.annotations == Annotations(("user", "assistant"), 0.8, "2025-01-12T15:00:58Z")
    dumped = resource.to_mcp().model_dump(by_alias=True, exclude_none=True)
    assert dumped["annotations"] == {
        "audience": ["user", "assistant"],
        "priority": 0.8,
        "lastModified": "2025-01-12T15:00:58Z",
    }
    assert dumped["size"] == 1234
    assert resource.cache is not None and resource.cache.scope == "public"
    templated = (
        Resource.builder()
        .name("t")
        .uri_template("x://{id}")
        .completion("id", ["1", "2"])
        .reader(read_manual)
        .build()
    )
    assert templated.completions == {"id": ["1", "2"]}
    with pytest.raises(ValidationError, match="unknown variable"):
        Resource.builder().name("t").uri_template("x://{id}").completion("nope", ["1"]).reader(
            read_manual
        ).build()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"audience": ["robot"]},
        {"audience": "user"},
        {"priority": 1.5},
        {"priority": -0.1},
        {"priority": True},
        {"last_modified": 5},
    ],
)
def test_bad_annotations_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError) as caught:
        Resource.builder().annotations(**kwargs)  # type: ignore[arg-type]
    assert caught.value.code == -32602
    assert "Annotation" in caught.value.message and "'u'" not in caught.value.message


def test_bad_size_and_cache_are_refused() -> None:
    with pytest.raises(ValidationError, match="size must not be negative"):
        Resource.builder().name("n").uri("x://1").size(-1).reader(read_manual).build()
    with pytest.raises(ValidationError, match="ttl_ms"):
        Resource.builder().cache(-1)
    with pytest.raises(ValidationError, match="scope"):
        Resource.builder().cache(10, "everyone")  # type: ignore[arg-type]
