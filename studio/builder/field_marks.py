"""Marking a form's fields: the widget each problem is about is framed invalid, the problem is its tooltip."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtWidgets import QWidget

from studio.document.declarations import Problem

__all__ = ["FieldMarks"]


class FieldMarks:
    """The widgets of a form by the `field` names its problems carry (`ValidationError.field`).

    A problem's field is looked up whole ("annotations.priority"), then without an index ("icons[0].src"
    gives "icons"), then by its first part ("annotations"). A problem without a field is placed by how its
    message starts (`by_message`: the builder's checks of icons and annotations raise without one). A
    widget keeps the tooltip it had when the marks were made, and gets it back when its mark goes.
    """

    def __init__(self, fields: Mapping[str, QWidget], *, by_message: Sequence[tuple[str, QWidget]] = ()) -> None:
        self._fields = dict(fields)
        self._by_message = tuple(by_message)
        # In the order of `fields`, each widget once (several fields may share one, "uri" and "uri_template").
        self._widgets = list(dict.fromkeys(self._fields.values()))
        self._default_tips = {widget: widget.toolTip() for widget in self._widgets}

    def widgets(self) -> list[QWidget]:
        """Every widget that can be marked, in form order."""
        return list(self._widgets)

    def marked(self) -> list[QWidget]:
        """The widgets framed as invalid now, in form order."""
        return [widget for widget in self._widgets if widget.property("invalid")]

    def widget_for(self, problem: Problem) -> QWidget | None:
        """The widget a problem is about, None when no field of the form is."""
        if problem.field is None:
            lowered = problem.message.lower()
            return next((widget for prefix, widget in self._by_message if lowered.startswith(prefix)), None)
        key = problem.field.split("[", 1)[0]
        fields = self._fields
        return fields.get(problem.field) or fields.get(key) or fields.get(key.split(".", 1)[0])

    def show(self, problems: Sequence[Problem], *, style: str) -> None:
        """Frame (with the style sheet `style`) each widget a problem is about, and clear the others."""
        for widget in self._widgets:
            tip = next((problem.message for problem in problems if widget is self.widget_for(problem)), "")
            widget.setProperty("invalid", bool(tip))
            widget.setStyleSheet(style if tip else "")
            widget.setToolTip(tip or self._default_tips.get(widget, ""))
