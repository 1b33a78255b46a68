"""The lessons' plots as one figure: File ▸ Export (Ctrl+E) in the Lessons window writes every plot the
open lesson shows, where it shows it, as PNG, SVG or PDF, with a caption naming the lesson, model and
text. The plots are drawn as the lesson shows them (their own controls set as the reader left them),
through the same vector path as every figure: words stay text, cells rectangles.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .export import ExportError, check_target, write_bytes
from .export_files import ask_save_path
from .figure import Figure, Piece, compose
from .figure_options import FigureOptions, FigureSize
from .labs.lesson_list import LESSON_LIST
from .view_file import state_json

LESSON_TYPES = (".png", ".svg", ".pdf")


def lesson_figure(window, options: FigureOptions) -> Figure:
    """The open lesson's plots at their places, and a caption."""
    key = window.current_key()
    content = window.current_panel().content
    views = [g for g in content.findChildren(pg.GraphicsView) if g.isVisibleTo(content) and g.width() > 1]
    if not views:
        raise ExportError("this lesson shows no plot yet: see its message, or choose another lesson")
    places = [QtCore.QRectF(QtCore.QPointF(g.mapTo(content, QtCore.QPoint(0, 0))), QtCore.QSizeF(g.size()))
              for g in views]
    bounds = places[0]
    for place in places[1:]:
        bounds = bounds.united(place)
    pieces = [Piece(g, place.topLeft() - bounds.topLeft()) for g, place in zip(views, places, strict=True)]
    controller = window.controller
    title = next(lesson.title for lesson in LESSON_LIST if lesson.key == key)
    name = controller.real_model.name if controller.is_real else controller.model.name
    text = f"Lesson “{title}” · {name} · “{' '.join(controller.sentence.split())[:140]}”" if options.caption else ""
    return compose(pieces, bounds.size(), options, text)


def write_lesson_figure(window, path: str, options: FigureOptions) -> None:
    from .figure_controller import capture_state
    from .figure_files import pdf_bytes, png_bytes, svg_bytes

    suffix = Path(path).suffix.lower()
    if suffix not in LESSON_TYPES:
        raise ExportError("a lesson's plots are written as .png, .svg or .pdf, "
                          f"not {suffix or 'a file without ending'}")
    check_target(path)
    figure = lesson_figure(window, options)
    lesson = {**options.to_dict(), "lesson": window.current_key()}
    text = state_json(capture_state(window.controller, "heatmap"), lesson)
    writer = {".png": png_bytes, ".svg": svg_bytes, ".pdf": pdf_bytes}[suffix]
    write_bytes(path, writer(figure, options, text))


class LessonExport(QtCore.QObject):
    def __init__(self, lessons_window, settings: QtCore.QSettings | None):
        super().__init__(lessons_window)
        self.window = lessons_window
        self.settings = settings
        self.action = QtGui.QAction("Export the lesson's plots…", lessons_window)
        self.action.setShortcut(QtGui.QKeySequence("Ctrl+E"))
        self.action.setShortcutContext(QtCore.Qt.ShortcutContext.WindowShortcut)
        self.action.triggered.connect(self.dialog)
        lessons_window.addAction(self.action)
        button = QtWidgets.QToolButton()
        button.setDefaultAction(self.action)
        lessons_window.tabs.setCornerWidget(button)

    def dialog(self) -> None:
        stem = f"lesson-{self.window.current_key().replace('_', '-')}"
        path = ask_save_path(self.window, self.settings, "lesson", stem, LESSON_TYPES, ".png", "Export the plots")
        if path:
            self.export_to(path)

    def export_to(self, path: str, options: FigureOptions | None = None) -> bool:
        try:
            write_lesson_figure(self.window, path, options or FigureOptions(size=FigureSize(scale=2)))
        except ExportError as exc:
            QtWidgets.QMessageBox.warning(self.window, "Export failed", f"{exc}\n\nNothing was written.")
            return False
        return True


def attach_lesson_export(lessons_window, settings: QtCore.QSettings | None) -> LessonExport:
    return LessonExport(lessons_window, settings)
