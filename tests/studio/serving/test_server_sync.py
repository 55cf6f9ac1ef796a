"""Document edits reach the real facade's catalogue only while valid; the last valid version keeps serving."""

from __future__ import annotations

import pytest

from resources_qt.project import Project, ResourceSpec
from resources_qt.qt import ServerController
from studio.document.document import ProjectDocument
from studio.serving.server_sync import ServerSync

READER = "def read(uri, params):\n    return 'x'\n"


@pytest.fixture
def linked(qtbot):
    document = ProjectDocument()
    controller = ServerController(project=Project())
    sync = ServerSync(document, controller)
    document.set_project(Project(resources=[
        ResourceSpec(name="a", uri="docs://a", mime_type="text/plain", reader=READER),
        ResourceSpec(name="b", uri="docs://b", mime_type="text/plain", reader=READER),
    ]))  # fmt: skip
    yield document, controller, sync
    controller.shutdown()


def served(controller: ServerController) -> dict[str, str]:
    return {r.name: r.uri or r.uri_template for r in controller.server.resources.direct_resources()
            + controller.server.resources.templates()}  # fmt: skip


def edit(document: ProjectDocument, target: str, **changes) -> None:
    spec = document.spec(target)
    for key, value in changes.items():
        setattr(spec, key, value)
    document.update_resource(target, spec)


def test_project_reset_serves_only_valid_declarations(qtbot):
    document = ProjectDocument()
    controller = ServerController(project=Project())
    try:
        sync = ServerSync(document, controller)
        document.set_project(Project(resources=[
            ResourceSpec(name="ok", uri="docs://ok", reader=READER),
            ResourceSpec(name="broken", uri="docs://broken", reader="def read(uri, params)\n"),
            ResourceSpec(name="bad_uri", uri="no scheme", reader=READER),
        ]))  # fmt: skip
        # A snippet error does not hold a resource back (its reads fail with the compile error);
        # a declaration error does.
        assert served(controller) == {"ok": "docs://ok", "broken": "docs://broken"}
        assert sync.held_back() == ["bad_uri"] and sync.failing() == ["broken"]
    finally:
        controller.shutdown()


def test_an_invalid_edit_keeps_the_last_valid_version(linked):
    document, controller, _ = linked
    edit(document, "a", title="First")
    assert controller.server.resources.get("a").title == "First"
    edit(document, "a", title="Half typed", uri="")
    assert controller.server.resources.get("a").title == "First"
    edit(document, "a", uri="docs://a2")
    assert served(controller)["a"] == "docs://a2"
    assert controller.server.resources.get("a").title == "Half typed"


def test_renames_adds_and_removals_follow_the_document(linked):
    document, controller, sync = linked
    edit(document, "a", name="alpha")
    assert served(controller) == {"alpha": "docs://a", "b": "docs://b"}
    added = document.add_resource(template=True)
    assert added in served(controller)
    document.remove_resource("b")
    assert "b" not in served(controller)
    document.undo_stack.undo()
    assert served(controller)["b"] == "docs://b"
    assert sorted(sync.served_names()) == sorted(served(controller))


def test_a_duplicate_address_is_held_back_until_it_is_resolved(linked):
    document, controller, _ = linked
    edit(document, "b", uri="docs://a")  # now both declare docs://a: neither edit may reach the server
    assert served(controller) == {"a": "docs://a", "b": "docs://b"}
    edit(document, "a", uri="docs://renamed")  # the clash is gone: both current versions are served
    assert served(controller) == {"a": "docs://renamed", "b": "docs://a"}


def test_prelude_edits_reach_the_facade(linked):
    document, controller, _ = linked
    document.set_prelude("VALUE = 1\n")
    assert controller.project.prelude == "VALUE = 1\n"
