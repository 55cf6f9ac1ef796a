"""The client-mode feature put together: the facade, the Remote page over its model, and the presenter."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QWidget

from resources_qt.qt.remote import RemoteController
from studio.document.document import ProjectDocument
from studio.preferences.settings import StudioSettings
from studio.remote.catalogue_model import RemoteCatalogueModel
from studio.remote.connect_dialog import ConnectRequest, ask_target
from studio.remote.remote_page import RemotePage
from studio.remote.remote_presenter import RemotePresenter, TrafficSink

__all__ = ["RemoteFeature"]


class RemoteFeature:
    """Builds client mode for one window: `controller`, `page` (the Remote page) and `presenter`.

    `ask_target` is the Connect to Server… prompt (injectable: tests answer it without a dialog).
    """

    def __init__(
        self,
        *,
        document: ProjectDocument,
        settings: StudioSettings,
        log_traffic: TrafficSink,
        label_session: Callable[[str, str], None],
        window: QWidget,
        ask: Callable[[list[str], str], ConnectRequest | None] | None = None,
    ) -> None:
        self.controller = RemoteController(parent=window)
        self.page = RemotePage(RemoteCatalogueModel())
        self.presenter = RemotePresenter(
            controller=self.controller, page=self.page, document=document, settings=settings,
            ask_target=ask if ask is not None else lambda recent, era: ask_target(window, recent, era),
            log_traffic=log_traffic, label_session=label_session, parent=window,
        )  # fmt: skip

    def shutdown(self) -> None:
        """End the connection and wait for its thread (and a stdio child) to be gone."""
        self.controller.shutdown()
