"""Every row of the `[server]` table shows on the settings page with its label and help, and edits the document."""

from __future__ import annotations

import pytest
from helpers.settings_values import other_value
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QLineEdit, QPlainTextEdit, QWidget

from resources_qt.project.settings_table import SETTINGS, Setting
from studio.settings_page.project_settings import ProjectSettingsView


@pytest.mark.parametrize("row", [pytest.param(row, id=row.key) for row in SETTINGS])
def test_every_table_row_has_its_field_label_and_help_and_an_edit_reaches_the_document(
    qtbot, document, row: Setting
) -> None:
    view = ProjectSettingsView(document)
    qtbot.addWidget(view)
    view.show()
    widget = view.findChild(QWidget, row.widget)
    assert widget is not None and widget is view.field(row.key)
    assert widget.toolTip() == row.help
    if isinstance(widget, QCheckBox):
        assert widget.text() == row.label.replace("&", "")
    else:
        buddies = [label for label in view.findChildren(QLabel) if label.buddy() is widget]
        assert [label.text() for label in buddies] == [row.label]
    value = other_value(row)
    if isinstance(widget, QCheckBox):
        qtbot.mouseClick(widget, Qt.MouseButton.LeftButton)
    elif isinstance(widget, QComboBox):
        widget.setCurrentText(str(value))
    elif isinstance(widget, QPlainTextEdit):
        widget.setPlainText(str(value))
        view.commit()
    else:
        assert isinstance(widget, QLineEdit)
        widget.setFocus()
        widget.selectAll()
        qtbot.keyClicks(widget, str(value))
        qtbot.keyClick(widget, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: getattr(document.project.server, row.key) == value)
    assert not view.errors
