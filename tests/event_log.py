"""Which events chosen widgets received while a test drove them (a layout asked of a toolbar, a paint
inside a call, a resize of a text's viewport): an event filter on each, removed on leaving."""

from PySide6 import QtCore


class EventLog(QtCore.QObject):
    """`with EventLog(kinds, *widgets) as log:` ... then `log.seen`: (widget, event type) as received."""

    def __init__(self, kinds, *watched: QtCore.QObject):
        super().__init__()
        self.kinds = set(kinds)
        self.watched = watched
        self.seen: list[tuple[QtCore.QObject, QtCore.QEvent.Type]] = []

    def __enter__(self) -> "EventLog":
        for widget in self.watched:
            widget.installEventFilter(self)
        return self

    def __exit__(self, *_exc) -> None:
        for widget in self.watched:
            widget.removeEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt API
        if event.type() in self.kinds:
            self.seen.append((watched, event.type()))
        return False
