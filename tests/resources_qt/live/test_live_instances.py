"""parse_instances: a snippet's answer becomes direct resources, or a clear error naming the item."""

from __future__ import annotations

import pytest

from resources_qt.live.instances import MAX_INSTANCES, InstancesError, parse_instances
from resources_qt.resource import Resource

TEMPLATE = Resource(name="ticket", uri_template="tickets://{project}/{id}", mime_type="application/json",
                    title="Ticket", reader=lambda uri, params: "{}")


def test_dicts_and_uris_become_resources_read_through_the_template() -> None:
    found = parse_instances(TEMPLATE, [
        {"project": "web", "id": 7},
        {"project": "api", "id": "9", "name": "api-9", "title": "Nine", "mime_type": "text/plain", "size": 12,
         "annotations": {"audience": ["user"], "priority": 0.5}},
        "tickets://web/8",
        "tickets://web/8",
    ])  # fmt: skip
    assert [r.uri for r in found] == ["tickets://web/7", "tickets://api/9", "tickets://web/8"]
    assert [r.name for r in found] == ["ticket (web, 7)", "api-9", "ticket (web, 8)"]
    assert found[0].title == "Ticket" and found[0].mime_type == "application/json"
    assert found[1].title == "Nine" and found[1].mime_type == "text/plain" and found[1].size == 12
    assert found[1].annotations is not None and found[1].annotations.priority == 0.5
    assert all(not r.is_template and r.reader is TEMPLATE.reader for r in found)


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ({"project": "web"}, "must return a list, not dict"),
        ("tickets://web/1", "must return a list, not str"),
        ([{"project": "web"}], "instances()[0]: missing the template variable(s) id"),
        ([{"project": "web", "id": 1, "colour": "red"}], "instances()[0]: unknown key(s) colour"),
        (["other://x"], "does not match the template"),
        ([3], "instances()[0] must be a dict"),
        ([{"project": "web", "id": [1]}], "id must be a string"),
        ([{"project": "web", "id": 1, "size": -1}], "size must be a non-negative integer"),
        ([{"project": "web", "id": 1, "title": 5}], "title must be a string"),
    ],
)
def test_malformed_answers_name_the_item_and_the_problem(answer: object, words: str) -> None:
    with pytest.raises(InstancesError) as caught:
        parse_instances(TEMPLATE, answer)
    assert words in str(caught.value)


def test_too_many_instances_is_refused() -> None:
    with pytest.raises(InstancesError, match=f"at most {MAX_INSTANCES:,} are listed .the instances item cap"):
        parse_instances(TEMPLATE, [f"tickets://p/{i}" for i in range(MAX_INSTANCES + 1)])
