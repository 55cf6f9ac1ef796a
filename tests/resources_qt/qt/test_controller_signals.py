"""The controller's signals are exactly the ones the protocol states, with the payloads it states."""

from __future__ import annotations

from PySide6.QtCore import QMetaMethod

from resources_qt.project import Project
from resources_qt.qt.controller import ServerController
from resources_qt.qt.protocol import CONTROLLER_SIGNALS, StudioController


def test_the_controller_has_the_protocols_signals_and_payloads(qtbot) -> None:
    controller = ServerController(project=Project())
    try:
        meta = controller.metaObject()
        found: dict[str, tuple[str, ...]] = {}
        for index in range(meta.methodOffset(), meta.methodCount()):
            method = meta.method(index)
            if method.methodType() == QMetaMethod.MethodType.Signal:
                name = bytes(method.name().data()).decode()
                found[name] = tuple(bytes(t.data()).decode() for t in method.parameterTypes())
        assert found == CONTROLLER_SIGNALS
        assert isinstance(controller, StudioController)
        for name in CONTROLLER_SIGNALS:
            assert name in StudioController.__annotations__, name
    finally:
        controller.shutdown()
