"""The controls that step through what a model wrote, one token at a time: ◀, a slider, ▶. The
decoder's generation panel and the encoder–decoder's Target box each have a row of them."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


def scrub_controls(back_tip: str, forth_tip: str, slider_tip: str
                   ) -> tuple[QtWidgets.QToolButton, QtWidgets.QSlider, QtWidgets.QToolButton]:
    """(◀, slider, ▶): the slider moves one token per key press or page step."""
    back = QtWidgets.QToolButton()
    back.setArrowType(QtCore.Qt.ArrowType.LeftArrow)
    back.setToolTip(back_tip)
    forth = QtWidgets.QToolButton()
    forth.setArrowType(QtCore.Qt.ArrowType.RightArrow)
    forth.setToolTip(forth_tip)
    slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
    slider.setToolTip(slider_tip)
    slider.setPageStep(1)
    return back, slider, forth
