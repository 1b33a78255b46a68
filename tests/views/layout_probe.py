"""Run as a script on an offscreen screen of a given size: opens the main window (and the lessons
window) as a user would and prints, as JSON, what test_layout.py checks. A separate process per
screen size, because Qt reads the offscreen screen's size once, when the application starts."""

import json
import sys

from PySide6 import QtCore, QtWidgets

from attention_explorer import engine
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller
from attention_explorer.labs.lesson_list import LESSON_LIST
from attention_explorer.views.matrix_plot import MatrixPlot


def settle(app: QtWidgets.QApplication) -> None:
    for _ in range(4):
        QtCore.QThread.msleep(20)
        app.processEvents()


def inside(outer: QtCore.QRect, inner: QtCore.QRect) -> bool:
    return outer.contains(inner)


def measure(window: MainWindow, app) -> dict:
    heatmap = window.heatmap
    a = heatmap.view.mapViewToScene(QtCore.QPointF(0, 0))
    b = heatmap.view.mapViewToScene(QtCore.QPointF(1, 1))
    rows, cols = heatmap.visible_cells()
    return {"cell_w": abs(b.x() - a.x()), "cell_h": abs(b.y() - a.y()), "zoomable": heatmap.is_zoomable(),
            "visible_rows": len(rows), "visible_cols": len(cols)}


def main(settings_path: str, long_sentence: str) -> None:
    app = QtWidgets.QApplication([])
    screen = app.primaryScreen().availableGeometry()
    settings = QtCore.QSettings(settings_path, QtCore.QSettings.Format.IniFormat)
    settings.setValue("tour/seen", True)
    window = MainWindow(Controller(engine.load_builtin("cat-sat-on-mat")), settings)
    window.show()
    settle(app)
    result = {"screen": [screen.width(), screen.height()],
              "window_inside": inside(screen, window.frameGeometry()),
              "tables_shown": window.timeline.tables_shown(),
              "copy_visible": window.toolbar.widgetForAction(window.copy_action).isVisible(),
              "default": measure(window, app)}
    window.timeline.set_tables_shown(True)  # what one click on "Tables" does
    settle(app)
    scroll = window.timeline.scroll
    result["tables_scroll"] = [scroll.horizontalScrollBar().maximum(), scroll.verticalScrollBar().maximum()]
    result["tables_cell"] = measure(window, app)["cell_w"]
    result["tables_share"] = window.steps_dock.height() / window.height()
    window.timeline.set_tables_shown(False)
    settle(app)
    window.controller.set_sentence(long_sentence)
    settle(app)
    result["long"] = measure(window, app)
    result["lessons_scroll"], result["lessons_cut_titles"] = {}, []
    for lesson in LESSON_LIST:
        window.show_lesson(lesson.key)
        settle(app)
        lessons = window.lessons_window
        result["lessons_scroll"][lesson.key] = lessons.tabs.currentWidget().verticalScrollBar().maximum()
        result["lessons_cut_titles"] += [plot.title() for plot in lessons.current_panel().findChildren(MatrixPlot)
                                         if "…" in plot.title_item.text and "…" not in plot.title()]
    result["lessons_inside"] = inside(screen, lessons.frameGeometry())
    print(json.dumps(result))
    lessons.close()
    window.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
