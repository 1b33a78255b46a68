"""The words along a plot's edge measure only the words they did not show before: a text so far a step
on or back keeps the measures of the words it shares, and lays them out as an axis given it fresh."""

import pyqtgraph as pg
import pytest

from attention_explorer.views.token_axis import TokenAxis
from screen_oracle import settle

WORDS = ["the", "cat", "sat", "on", "a", "mat", "because", "it", "was", "tired"]
LONGEST = "unbelievably-long-word-at-the-end"


def _axis(qtbot, orientation: str) -> tuple:
    graphics = pg.GraphicsLayoutWidget()
    qtbot.addWidget(graphics)
    axis = TokenAxis(orientation)
    plot = graphics.addPlot(axisItems={orientation: axis})
    graphics.resize(500, 400)
    graphics.show()
    qtbot.waitExposed(graphics)
    return graphics, axis, plot


def _shown(qtbot, orientation: str, labels: list[str]) -> tuple:
    _graphics, axis, plot = _axis(qtbot, orientation)
    axis.set_tokens(labels)
    plot.getViewBox().setRange(xRange=(-0.5, 29.5), yRange=(-0.5, 29.5), padding=0)
    settle()
    return axis.widest_px(), axis.extent(False), axis.extent(True), [(i, r.getRect()) for i, r in axis.drawn_labels()]


@pytest.mark.parametrize("orientation", ["top", "left"])
def test_a_text_so_far_a_step_back_or_on_is_laid_out_as_a_fresh_axis_lays_it_out(qtbot, orientation):
    whole = WORDS * 3 + [LONGEST]
    _graphics, axis, plot = _axis(qtbot, orientation)
    plot.getViewBox().setRange(xRange=(-0.5, 29.5), yRange=(-0.5, 29.5), padding=0)
    for labels in (whole, whole[:-1], whole[:12], whole, WORDS[::-1] * 3, []):
        axis.set_tokens(labels)
        plot.getViewBox().setRange(xRange=(-0.5, 29.5), yRange=(-0.5, 29.5), padding=0)
        settle()
        assert axis.labels() == labels
        shown = (axis.widest_px(), axis.extent(False), axis.extent(True),
                 [(i, r.getRect()) for i, r in axis.drawn_labels()])
        assert shown == _shown(qtbot, orientation, labels), f"{len(labels)} words"
