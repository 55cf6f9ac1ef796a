"""URI templates: the seed's match table, RFC 6570 beyond it, resolution order, index versus linear scan."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from resources_qt import ValidationError
from resources_qt.templates import CompiledTemplate, TemplateIndex, compile_template

# -- the seed's table --------------------------------------------------------

MATCH_TABLE = [
    ("users/{id}/profile", "users/123/profile", {"id": "123"}),
    ("users/{id}/profile", "users/abc/profile", {"id": "abc"}),
    ("users/{id}/profile", "users/profile", None),
    ("users/{id}/profile", "users/123/profile/extra", None),
    (
        "repo://{owner}/{repo}/{path}",
        "repo://tms/aistudio/main.pas",
        {"owner": "tms", "repo": "aistudio", "path": "main.pas"},
    ),
    ("repo://{owner}/{repo}/{path}", "repo://tms/aistudio", None),
    # A simple variable never spans '/': no variable-depth paths.
    ("repo://{owner}/{repo}/{path}", "repo://tms/aistudio/src/units/main.pas", None),
    ("crm://customers/{id}/profile", "crm://customers/42/profile", {"id": "42"}),
    ("crm://customers/{id}/profile", "crm://customers/42/orders", None),
    ("crm://customers/{id}/profile", "crm://vendors/42/profile", None),
]


@pytest.mark.parametrize(("template", "uri", "expected"), MATCH_TABLE)
def test_seed_match_table(template: str, uri: str, expected: dict[str, str] | None) -> None:
    assert compile_template(template).match(uri) == expected
    index: TemplateIndex[str] = TemplateIndex()
    index.add(compile_template(template), template)
    found = index.match(uri)
    assert (found.params if found else None) == expected


def test_reserved_expansion_spans_segments() -> None:
    compiled = compile_template("repo://{owner}/{repo}/{+path}")
    assert compiled.match("repo://tms/aistudio/src/units/main.pas") == {
        "owner": "tms",
        "repo": "aistudio",
        "path": "src/units/main.pas",
    }
    assert compiled.match("repo://tms/aistudio") is None


def test_query_parameters_are_optional_and_order_free() -> None:
    compiled = compile_template("kb://search{?q,lang}")
    assert compiled.query_variable_names == frozenset({"q", "lang"})
    assert compiled.match("kb://search") == {}
    assert compiled.match("kb://search?lang=en&q=mcp%20server") == {"q": "mcp server", "lang": "en"}
    assert compiled.match("kb://search?q=x&utm=ignored") == {"q": "x"}
    assert compiled.match("kb://searching?q=x") is None


def test_values_are_percent_decoded() -> None:
    compiled = compile_template("docs://{name}")
    assert compiled.match("docs://hello%20world%E2%9C%93.txt") == {"name": "hello world✓.txt"}
    # An encoded slash decodes into the value; only a literal '/' separates segments.
    assert compiled.match("docs://a%2Fb") == {"name": "a/b"}


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("x://plain", "has no {variable}"),
        ("x://{id", "Invalid URI template"),
        ("x://{a}{b}", "Invalid URI template"),
        ("x://{+a}/{+b}", "Invalid URI template"),
        ("x://{id}/{id}", "Invalid URI template"),
    ],
)
def test_invalid_templates_are_invalid_params(template: str, problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        compile_template(template)
    assert caught.value.code == -32602 and problem in caught.value.message


def test_compiled_template_exposes_prefix_and_variables() -> None:
    compiled = compile_template("kb://articles/{section}/{slug}{?format}")
    assert compiled.prefix == "kb://articles/"
    assert compiled.variable_names == ("section", "slug", "format")
    assert compiled.expand({"section": "faq", "slug": "a b"}) == "kb://articles/faq/a%20b"
    assert compiled.specificity == (-len("kb://articles/"), 3)


# -- expand then match gives back the values ---------------------------------

SAFE_PATH = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="?#%"), max_size=30)


@given(st.text(max_size=20))
def test_simple_expand_then_match(value: str) -> None:
    compiled = compile_template("users/{id}/profile")
    assert compiled.match(compiled.expand({"id": value})) == {"id": value}


@given(st.text(max_size=12), st.text(max_size=12), st.text(max_size=12))
def test_several_simple_variables_round_trip(owner: str, repo: str, path: str) -> None:
    compiled = compile_template("repo://{owner}/{repo}/{path}")
    values = {"owner": owner, "repo": repo, "path": path}
    assert compiled.match(compiled.expand(values)) == values


@given(st.text(max_size=10), SAFE_PATH)
def test_reserved_path_expand_then_match(owner: str, path: str) -> None:
    compiled = compile_template("repo://{owner}/files/{+path}")
    values = {"owner": owner, "path": path}
    assert compiled.match(compiled.expand(values)) == values


@given(
    st.text(max_size=10),
    st.dictionaries(st.sampled_from(["q", "lang"]), st.text(max_size=15), max_size=2),
)
def test_query_expand_then_match(service: str, query: dict[str, str]) -> None:
    compiled = compile_template("logs://{service}{?q,lang}")
    values = {"service": service, **query}
    assert compiled.match(compiled.expand(values)) == values


# -- resolution order ---------------------------------------------------------


def index_of(*templates: str) -> TemplateIndex[str]:
    index: TemplateIndex[str] = TemplateIndex()
    for template in templates:
        index.add(compile_template(template), template)
    return index


def winner(index: TemplateIndex[str], uri: str) -> str | None:
    found = index.match(uri)
    return found.item if found else None


def test_longer_literal_prefix_wins_whatever_the_registration_order() -> None:
    templates = ["kb://{+path}", "kb://articles/{section}/{slug}", "kb://articles/featured/{slug}"]
    for ordering in (templates, templates[::-1], [templates[1], templates[0], templates[2]]):
        index = index_of(*ordering)
        assert winner(index, "kb://articles/featured/intro") == "kb://articles/featured/{slug}"
        assert winner(index, "kb://articles/faq/intro") == "kb://articles/{section}/{slug}"
        assert winner(index, "kb://other/deep/path") == "kb://{+path}"


def test_prefix_beats_fewer_variables() -> None:
    index = index_of("kb://{+path}", "kb://articles/{section}/{slug}{?lang}")
    assert winner(index, "kb://articles/a/b") == "kb://articles/{section}/{slug}{?lang}"


def test_same_prefix_fewer_variables_wins() -> None:
    index = index_of("x://{a}/{b}", "x://{a}/index", "x://{a}/{b}{?page,size}")
    assert winner(index, "x://1/index") == "x://{a}/index"
    assert winner(index, "x://1/other") == "x://{a}/{b}"


def test_prefix_within_a_segment_counts_literally() -> None:
    index = index_of("img://{name}.png", "img://{name}", "img://thumb-{name}")
    assert winner(index, "img://thumb-cat") == "img://thumb-{name}"
    assert winner(index, "img://cat") == "img://{name}"
    assert [m.item for m in index.match_all("img://thumb-cat")] == ["img://thumb-{name}", "img://{name}"]


def test_ties_go_to_registration_order_and_discard_passes_it_on() -> None:
    index = index_of("x://{a}/{b}", "x://{c}/{d}")
    assert winner(index, "x://1/2") == "x://{a}/{b}"
    assert index.discard("x://{a}/{b}")
    assert winner(index, "x://1/2") == "x://{c}/{d}"
    assert not index.discard("x://{a}/{b}")
    index.add(compile_template("x://{a}/{b}"), "x://{a}/{b}")
    assert winner(index, "x://1/2") == "x://{c}/{d}"  # re-added later, so it now loses the tie
    assert index.items() == ["x://{c}/{d}", "x://{a}/{b}"]


def test_discard_prunes_and_clear_empties() -> None:
    index = index_of("a://x/{y}", "a://x/z/{y}", "b://{+p}")
    assert len(index) == 3
    for template in ("a://x/z/{y}", "a://x/{y}"):
        assert index.discard(template)
    assert winner(index, "a://x/1") is None and winner(index, "b://q/r") == "b://{+p}"
    index.clear()
    assert len(index) == 0 and winner(index, "b://q") is None


def test_a_large_catalogue_resolves_each_template() -> None:
    # Shapes that would put every template into one prefix bucket: they share
    # "kb://" or a long literal prefix and differ only after a variable.
    templates = (
        [f"kb://s{i}/{{slug}}" for i in range(700)]
        + [f"kb://catalog/v1/items/{{id}}/f{i}" for i in range(700)]
        + [f"kb://{{tenant}}/t{i}/{{+path}}" for i in range(700)]
    )
    index = index_of(*templates)
    for i in range(0, 700, 37):
        assert winner(index, f"kb://s{i}/hello") == f"kb://s{i}/{{slug}}"
        assert winner(index, f"kb://catalog/v1/items/9/f{i}") == f"kb://catalog/v1/items/{{id}}/f{i}"
        assert winner(index, f"kb://acme/t{i}/a/b") == f"kb://{{tenant}}/t{i}/{{+path}}"
    assert winner(index, "kb://catalog/v1/items/9/g1") is None


# -- the index agrees with a linear scan in resolution order ------------------

SEGMENTS = ["a", "b", "ab", "{v}", "a{v}", "b{v}", "{v}.json", "{v},{w}"]
URI_SEGMENTS = ["a", "b", "ab", "abc", "a.json", "b,c", "x%2Fy", ""]


@st.composite
def templates(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["k://", "k://a/", ""]))
    parts = draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4))
    tail = draw(st.sampled_from(["", "/{+rest}", "{?q}", "/{+rest}{?q}", "{/seg*}", "{#frag}"]))
    counter = iter(range(100))
    # Every variable gets its own name: the SDK refuses repeated names.
    body = "/".join(
        p.replace("{v}", f"{{v{next(counter)}}}").replace("{w}", f"{{w{next(counter)}}}") for p in parts
    )
    template = scheme + body + tail
    if "{" not in template:
        template += "/{last}"
    return template


@st.composite
def uris(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["k://", "k://a/", ""]))
    parts = draw(st.lists(st.sampled_from(URI_SEGMENTS), min_size=1, max_size=6))
    query = draw(st.sampled_from(["", "?q=1", "?q=a/b", "#f/g"]))
    return scheme + "/".join(parts) + query


def linear(compiled: list[CompiledTemplate], uri: str) -> list[str]:
    ranked = sorted(enumerate(compiled), key=lambda pair: (*pair[1].specificity, pair[0]))
    return [c.template for _, c in ranked if c.match(uri) is not None]


@settings(max_examples=300, deadline=None)
@given(st.lists(templates(), min_size=1, max_size=12, unique=True), st.lists(uris(), min_size=1, max_size=8))
def test_index_matches_a_linear_scan(template_list: list[str], uri_list: list[str]) -> None:
    compiled = []
    for template in template_list:
        try:
            compiled.append(compile_template(template))
        except ValidationError:
            continue
    index: TemplateIndex[str] = TemplateIndex()
    for item in compiled:
        index.add(item, item.template)
    for uri in uri_list + [c.expand({name: "ab" for name in c.variable_names}) for c in compiled]:
        expected = linear(compiled, uri)
        assert [m.item for m in index.match_all(uri)] == expected, uri
        assert winner(index, uri) == (expected[0] if expected else None)
