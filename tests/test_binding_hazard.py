"""PySide6 6.12.0 on CPython < 3.12 loses a reference to None on every void Qt call, and the
interpreter later aborts ("Fatal Python error: none_dealloc"). The dependency is pinned below 6.12
there; this test fails if a build with the leak is ever installed."""

import sys

import pytest
from PySide6 import QtCore, QtGui

pytestmark = pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12")

CALLS = 50_000


def test_void_qt_calls_keep_none_alive(qapp):
    pen = QtGui.QPen()
    path = QtGui.QPainterPath()
    before = sys.getrefcount(None)
    for i in range(CALLS // 2):
        pen.setWidth(i % 7 + 1)
        path.lineTo(float(i % 13), 1.0)
    QtCore.QCoreApplication.processEvents()
    after = sys.getrefcount(None)
    assert after >= before - 100, f"None lost {before - after} references over {CALLS} void Qt calls"
