"""The preview's "Read as": a typed or picked scope set changes what the preview lists and reads, no token needed."""

from __future__ import annotations

import pytest

from resources_qt.project import AuthConfig, Project, ResourceSpec, ServerSettings
from resources_qt.qt import ServerController
from studio.preview.preview import PreviewPanel

pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")

WAIT = 20_000


def _project() -> Project:
    def spec(name: str, uri: str, scopes: list[str]) -> ResourceSpec:
        return ResourceSpec(name=name, uri=uri, mime_type="text/plain", scopes=scopes,
                            reader=f"def read(uri, params):\n    return {name!r}\n")  # fmt: skip

    auth = AuthConfig(issuer="https://auth.example.com/realms/support", resource="https://mcp.example.com/mcp",
                      required_scopes=("mcp:read",))  # fmt: skip
    return Project(server=ServerSettings(name="read as", workers=1, auth=auth),
                   resources=[spec("status", "desk://status", []), spec("profile", "crm://profile", ["crm:read"]),
                              spec("vip", "crm://vip", ["crm:admin"])])  # fmt: skip


@pytest.fixture
def wired(qtbot):
    controller = ServerController(project=_project())
    panel = PreviewPanel()
    qtbot.addWidget(panel)
    # What the shell's preview presenter does, plus the one line that attaches "Read as" to the facade.
    panel.preview_requested.connect(controller.preview)
    controller.preview_finished.connect(panel.show_outcome)
    panel.read_as.attach(controller)
    yield controller, panel
    controller.shutdown(timeout=10)


def _read(qtbot, controller: ServerController, panel: PreviewPanel, uri: str):
    panel.set_resource(next(s for s in controller.project.resources if s.uri == uri))
    panel.set_uri(uri)
    with qtbot.waitSignal(controller.preview_finished, timeout=WAIT) as finished:
        panel.read()
    return finished.args[0]


def test_off_the_preview_reads_everything(qtbot, wired) -> None:
    controller, panel = wired
    assert panel.read_as.isVisibleTo(panel) and panel.read_as.scopes is None
    assert _read(qtbot, controller, panel, "crm://vip").ok


def test_reading_as_a_scope_set_hides_what_it_may_not_see(qtbot, wired) -> None:
    controller, panel = wired
    bar = panel.read_as
    bar.check.setChecked(True)
    bar.set_scopes("mcp:read crm:read")
    assert bar.scopes == ("mcp:read", "crm:read")
    assert bar.summary.text() == "Lists 2 of 3: status, profile"
    hidden = _read(qtbot, controller, panel, "crm://vip")
    assert hidden.error_code == -32002 and hidden.error_message == "Resource not found: crm://vip"
    assert _read(qtbot, controller, panel, "crm://profile").ok
    bar.check.setChecked(False)
    assert bar.scopes is None and _read(qtbot, controller, panel, "crm://vip").ok


def test_scopes_are_picked_from_the_project_and_a_missing_required_scope_is_said(qtbot, wired) -> None:
    _controller, panel = wired
    bar = panel.read_as
    assert [bar.scopes_box.itemText(i) for i in range(bar.scopes_box.count())] == ["mcp:read", "crm:read",
                                                                                      "crm:admin"]
    bar.check.setChecked(True)
    bar.set_scopes("crm:read")
    bar.scopes_box.activated.emit(2)  # pick crm:admin: added to what was typed
    assert bar.scopes == ("crm:read", "crm:admin")
    assert "refused (403) without mcp:read" in bar.summary.text()
    bar.set_scopes('crm"read')
    assert "not a scope" in bar.summary.text() and bar.scopes == ("crm:read", "crm:admin")
