"""Fixtures for the lesson panels: a controller on a chosen model and one panel on screen (offscreen)."""

import pytest
from PySide6 import QtWidgets

from attention_explorer import engine
from attention_explorer.controller import Controller


@pytest.fixture
def make_panel(qtbot):
    def make(panel_class, model: str = "cat-sat-on-mat", sentence: str | None = None):
        controller = Controller(engine.load_builtin(model), sentence)
        panel = panel_class(controller)
        qtbot.addWidget(panel)
        panel.resize(1300, 860)
        panel.show()
        qtbot.waitExposed(panel)
        QtWidgets.QApplication.processEvents()
        return panel
    return make
