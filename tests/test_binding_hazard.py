"""Hazards of the Qt binding itself, each of which once crashed the app.

PySide6 6.12.0 on CPython < 3.12 loses a reference to None on every void Qt call, and the interpreter
later aborts ("Fatal Python error: none_dealloc"). The dependency is pinned below 6.12 there; a test
fails if a build with the leak is ever installed. Classes made at run time: see the last test."""

import ast
import sys
from pathlib import Path

import pytest
from PySide6 import QtCore, QtGui

CALLS = 50_000


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12")
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


def test_no_class_is_made_inside_a_function():
    """A Qt class made each time a function runs gets a metaobject of its own each time, freed with the
    class while Shiboken's map still holds its wrapper at that address: a later layout or menu allocated
    there was handed that wrapper (a submenu came back as a QMetaObject; a deferred deletion crashed).
    So every class of the app's Qt side is made once, when its module is imported."""
    package = Path(__file__).parents[1] / "app" / "attention_explorer"
    made_in_functions = []
    for path in sorted(package.rglob("*.py")):
        if "engine" in path.relative_to(package).parts:
            continue  # pure NumPy: no Qt class can be made there
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                made_in_functions += [f"{path.relative_to(package)}:{inner.lineno} {inner.name}"
                                      for inner in ast.walk(node) if isinstance(inner, ast.ClassDef)]
    assert made_in_functions == []
