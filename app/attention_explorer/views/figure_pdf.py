"""A view as a one-page PDF, drawn as vectors (words stay text) at the view's size on screen.

The PNG and SVG halves live in image_export; this adds PDF for the census grid with Qt's own PDF
writer (QPdfWriter, part of QtGui), painting the view the way the SVG export does.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from ..export import check_target, write_bytes
from ..image_export import _paint_widget

POINTS_PER_INCH = 72


def pdf_bytes(view, title: str = "Attention Explorer") -> bytes:
    widget = view.export_widget()
    buffer = QtCore.QBuffer()
    buffer.open(QtCore.QIODevice.OpenModeFlag.WriteOnly)
    writer = QtGui.QPdfWriter(buffer)
    dpi = widget.logicalDpiX()          # the page is the widget's size: one pixel on screen, one pixel here
    writer.setResolution(dpi)
    size = widget.size()
    page = QtCore.QSizeF(size.width() * POINTS_PER_INCH / dpi, size.height() * POINTS_PER_INCH / dpi)
    writer.setPageSize(QtGui.QPageSize(page, QtGui.QPageSize.Unit.Point, "view"))
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
    writer.setTitle(title)
    writer.setCreator("Attention Explorer")
    _paint_widget(widget, writer,
                  QtWidgets.QWidget.RenderFlag.DrawChildren | QtWidgets.QWidget.RenderFlag.DrawWindowBackground)
    del writer  # finishes the document
    return bytes(buffer.data())


def export_pdf(view, path: str | Path, title: str = "Attention Explorer") -> None:
    check_target(path)
    write_bytes(path, pdf_bytes(view, title))
