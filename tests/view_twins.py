"""A view's twin: the same view class built fresh on the same controller, at the same size, given the
view's own state (what the controller does not hold: zoom, scroll, fold, its own check boxes, the
cell under the mouse). A view after any history of updates must draw what its twin draws (see
screen_oracle.py); every cache, label pool and "unchanged, left alone" shortcut is checked by that.

Twins are never shown on screen (WA_DontShowOnScreen), so they steal no pointer or focus from a
walk driven under a real X server, and are deleted as soon as they are compared.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6 import QtCore, QtWidgets

from attention_explorer.views.arc_diagram import QtArcDiagram
from attention_explorer.views.heatmap import QtHeatmap
from attention_explorer.views.model_view import QtModelView
from attention_explorer.views.next_tokens import QtNextTokens
from attention_explorer.views.row_bars import QtRowBars
from attention_explorer.views.step_timeline import QtStepTimeline
from attention_explorer.views.token_chips import QtTokenChips
from screen_oracle import check_same_picture, settle


def _copy_heatmap(shown: QtHeatmap, twin: QtHeatmap) -> None:
    if shown.colour_scale_chosen():
        twin.set_colour_scale(shown.colour_scale())
    twin.show_readout(shown.readout_cell())
    settle()
    (x0, x1), (y0, y1) = shown.view.viewRange()
    twin.view.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)


def _copy_arcs(shown: QtArcDiagram, twin: QtArcDiagram) -> None:
    twin.all_heads.setChecked(shown.all_heads.isChecked())
    twin.strongest.setValue(shown.strongest.value())


def _copy_timeline(shown: QtStepTimeline, twin: QtStepTimeline) -> None:
    twin.set_tables_shown(shown.tables_shown())
    settle()
    if shown.tables_shown():
        twin.panel.set_filled(shown.panel.filled(), follow=False)
        twin.panel.restore_cells(*shown.panel.chosen_cells())
        settle()
        for bar in ("horizontalScrollBar", "verticalScrollBar"):
            getattr(twin.scroll, bar)().setValue(getattr(shown.scroll, bar)().value())


def _copy_chips(shown: QtTokenChips, twin: QtTokenChips) -> None:
    twin.resize(shown.size())


def _copy_model_view(shown: QtModelView, twin: QtModelView) -> None:
    twin.show_readout(shown.readout_spot())
    twin.scroll.verticalScrollBar().setValue(shown.scroll.verticalScrollBar().value())
    twin.scroll.horizontalScrollBar().setValue(shown.scroll.horizontalScrollBar().value())


def _nothing(_shown, _twin) -> None:
    pass


TWINS: dict[type, Callable] = {
    QtHeatmap: _copy_heatmap, QtArcDiagram: _copy_arcs, QtRowBars: _nothing, QtStepTimeline: _copy_timeline,
    QtTokenChips: _copy_chips, QtNextTokens: _nothing, QtModelView: _copy_model_view,
}


@contextmanager
def twin_of(view: QtWidgets.QWidget) -> Iterator[QtWidgets.QWidget]:
    """A fresh view of `view`'s class on the same controller, at its size, with its view state."""
    # a child of a plain widget, as the view is in the window: a window of its own could not be made
    # smaller than its layout's least size (a docked view can, and is)
    host = QtWidgets.QWidget()
    host.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
    host.resize(view.size())
    twin = type(view)(view.controller, host)
    twin.resize(view.size())
    host.show()
    settle()
    TWINS[type(view)](view, twin)
    twin.resize(view.size())
    settle()
    try:
        yield twin
    finally:
        host.close()
        host.deleteLater()
        settle()


def check_twin(view: QtWidgets.QWidget, where: str) -> None:
    """`view` draws what a view built fresh from the same state draws."""
    if not view.isVisible() or view.width() < 2 or view.height() < 2:
        return
    with twin_of(view) as twin:
        check_same_picture(view, twin, f"{type(view).__name__} after {where}")
