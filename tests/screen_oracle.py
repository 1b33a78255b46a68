"""Two oracles for what the user sees, for tests and the random walk.

`widget.grab()` repaints a widget from scratch, so a view whose labels, caches or pools fell out of
step with the controller, or one that repainted too small a region, still looks right to it. These
compare pictures instead:

- the backing store against a full repaint: `window.screen().grabWindow(window.winId())` returns what
  the history of partial repaints actually left on screen (Qt's offscreen platform keeps a real
  backing store, as X11 does), `window.grab()` what a full repaint draws now;
- a view after its history of updates against the same view built fresh on the same controller and
  given the same view state (zoom, scroll, fold, its own check boxes): every cache, label pool and
  "unchanged, left alone" shortcut must leave the picture a fresh view draws (see view_twins.py).

Both are rendered by the same raster engine at the same size from the same state, so they should be
the same to the pixel. A channel may differ by at most CHANNEL_TOLERANCE (a cached pixmap blitted at a
fractional offset rounds differently from a direct paint of the same antialiased edge). Beyond that,
a lone pixel off by at most LONE_PIXEL_TOLERANCE is let pass: Qt's styles draw a frame's antialiased
corner twice when a resize repaints it in two strips, leaving that one pixel up to 12 levels darker;
a stale word, number or line is never one pixel. Any other pixel beyond CHANNEL_TOLERANCE is a
difference. The backing store is compared with BACKING_TOLERANCE instead: Qt's own widgets (the
tool buttons' icons of a dock just shown) leave their antialiased edges up to 24 levels darker where two
partial repaints blended them twice; a missed repaint leaves a stale word, line or number, a hundred
levels and more from what should be there. On failure a picture of the two and their difference is
written to SCREEN_DIFF_DIR (default: the system's temporary folder) and named in the message.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

CHANNEL_TOLERANCE = 2
LONE_PIXEL_TOLERANCE = 32
BACKING_TOLERANCE = 24
TIP_DEADLINE_MS = 1500  # how long a tooltip is hidden again before it counts as one that stays


@dataclass(frozen=True)
class Difference:
    pixels: int                 # pixels differing by more than CHANNEL_TOLERANCE in some channel
    largest: int                # the largest channel difference
    box: tuple[int, int, int, int] | None  # x, y, width, height of the differing pixels
    size_mismatch: str = ""

    def __bool__(self) -> bool:
        return bool(self.pixels or self.size_mismatch)

    def __str__(self) -> str:
        if self.size_mismatch:
            return self.size_mismatch
        return f"{self.pixels} pixels differ (by up to {self.largest}) within x, y, w, h = {self.box}"


def _pixels(image: QtGui.QImage) -> np.ndarray:
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    rows = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, :image.width() * 4].reshape(image.height(), image.width(), 4)[..., :3].astype(np.int16)


def difference(shown: QtGui.QImage, expected: QtGui.QImage, tolerance: int = CHANNEL_TOLERANCE) -> Difference:
    if shown.size() != expected.size():
        return Difference(0, 0, None, f"sizes differ: {shown.width()}×{shown.height()} shown, "
                                      f"{expected.width()}×{expected.height()} expected")
    delta = np.abs(_pixels(shown) - _pixels(expected)).max(axis=2)
    bad = _differing(delta, tolerance)
    if not bad.any():
        return Difference(0, int(delta.max(initial=0)), None)
    ys, xs = np.nonzero(bad)
    box = (int(xs.min()), int(ys.min()), int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1))
    return Difference(int(bad.sum()), int(delta.max()), box)


def _differing(delta: np.ndarray, tolerance: int = CHANNEL_TOLERANCE) -> np.ndarray:
    """The pixels that count as different (see the module's docstring)."""
    off = delta > tolerance
    padded = np.pad(off, 1)
    neighbours = sum(padded[1 + dy:padded.shape[0] - 1 + dy, 1 + dx:padded.shape[1] - 1 + dx]
                     for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)
    return off & ((neighbours > 0) | (delta > LONE_PIXEL_TOLERANCE))


def write_picture(shown: QtGui.QImage, expected: QtGui.QImage, name: str, tolerance: int = CHANNEL_TOLERANCE) -> Path:
    """Shown | expected | the differing pixels in red over a faded copy of the expected picture."""
    folder = Path(os.environ.get("SCREEN_DIFF_DIR") or tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    width, height = max(shown.width(), expected.width()), max(shown.height(), expected.height())
    sheet = QtGui.QImage(width * 3 + 20, height, QtGui.QImage.Format.Format_RGB32)
    sheet.fill(QtGui.QColor("white"))
    painter = QtGui.QPainter(sheet)
    painter.drawImage(0, 0, shown)
    painter.drawImage(width + 10, 0, expected)
    painter.setOpacity(0.3)
    painter.drawImage(2 * width + 20, 0, expected)
    painter.setOpacity(1.0)
    if shown.size() == expected.size():
        bad = _differing(np.abs(_pixels(shown) - _pixels(expected)).max(axis=2), tolerance)
        painter.setPen(QtGui.QColor("red"))
        for y, x in zip(*np.nonzero(bad), strict=True):
            painter.drawPoint(2 * width + 20 + int(x), int(y))
    painter.end()
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:80]
    path = folder / f"screen-diff-{safe}-{os.getpid()}.png"
    sheet.save(str(path))
    return path


def settle() -> None:
    """Let every queued event, deferred delete and pending repaint reach the backing store."""
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    QtWidgets.QApplication.processEvents()


def hide_tooltips() -> QtCore.QRect | None:
    """Tooltips are windows of their own, over the window in neither picture. Qt hides one after a
    delay; on X11 the screen's picture of the window holds it until then, and the part it covered
    is repainted only once the server says it is uncovered. `sync` waits for the server to have
    answered every request so far, the tip's hiding among them, so the window's expose is in Qt's
    queue after it.

    A tip may come back while we wait: a view that shows one for the cell under the pointer hears the
    pointer's last move late (pyqtgraph's rate-limited mouse signal, the X server's queue) and shows
    it again, as it should for a resting pointer. So it is hidden again until it stays hidden. While a
    decoder writes, the tip of the cell under a resting pointer follows each new token and stays:
    then its place on the screen (global coordinates) is returned, else None."""
    deadline = QtCore.QDeadlineTimer(TIP_DEADLINE_MS)
    while True:
        QtWidgets.QToolTip.hideText()
        while QtWidgets.QToolTip.isVisible() and not deadline.hasExpired():
            QTest.qWait(10)
        QtGui.QGuiApplication.sync()
        settle()
        if not QtWidgets.QToolTip.isVisible():
            return None
        if deadline.hasExpired():
            return next((tip.frameGeometry() for tip in QtWidgets.QApplication.topLevelWidgets()
                         if tip.objectName() == "qtooltip_label" and tip.isVisible()), None)


def close_popups() -> None:
    """A popup (the sentence box's list of words that complete the one typed) is a window of its own over
    the window, which the screen's picture holds on X11 and a repaint of the window does not. It is
    closed, as the user's next click would, and the part it covered repainted once the server says so."""
    closed = False
    while (popup := QtWidgets.QApplication.activePopupWidget()) is not None:
        popup.close()
        closed = True
    if closed:
        QtGui.QGuiApplication.sync()
        settle()


def _cover(rect: QtCore.QRect, *images: QtGui.QImage) -> None:
    """Paint `rect` (and a pixel round it, for the tip's edge) the same in each image."""
    for image in images:
        painter = QtGui.QPainter(image)
        painter.fillRect(rect.adjusted(-1, -1, 1, 1), QtGui.QColor("magenta"))
        painter.end()


def backing_store(window: QtWidgets.QWidget) -> QtGui.QImage:
    return window.screen().grabWindow(window.winId()).toImage()


def check_backing_store(window: QtWidgets.QWidget, where: str) -> None:
    """The window as its partial repaints left it equals a full repaint of it now."""
    close_popups()
    tip = hide_tooltips()
    # again, for one opened while the event loop ran as the tip was waited for: an X11 walk (seed 136,
    # action 679, just after keys were typed) grabbed the sentence box's list of words over the window
    # once; the same seed run again did not meet it, so the cause is not known for sure
    close_popups()
    # a repaint asked for in the last pass of the event loop (a timer's slot: the status bar's 4 s
    # message cleared) is still queued, and the event loop would paint it before the user saw anything;
    # a CI walk (seed 3, action 38) grabbed the message the full repaint no longer drew
    QtCore.QCoreApplication.sendPostedEvents(window, QtCore.QEvent.Type.UpdateRequest)
    shown, expected = backing_store(window), window.grab().toImage()
    if tip is not None:  # a tip that stays (see hide_tooltips) covers its part of the screen's picture
        _cover(tip.translated(-window.mapToGlobal(QtCore.QPoint(0, 0))), shown, expected)
    found = difference(shown, expected, BACKING_TOLERANCE)
    if found:
        path = write_picture(shown, expected, f"backing-{where}", BACKING_TOLERANCE)
        raise AssertionError(f"after {where}, the screen differs from a full repaint: {found}; see {path}")


# Qt's own controls: a twin has no pointer over them, so their hover shading (a spin box's arrows, a
# button's frame) is the pointer's, not the view's. They are compared by what they hold instead, and
# their pixels left out of the picture.
CONTROLS = (QtWidgets.QAbstractSpinBox, QtWidgets.QComboBox, QtWidgets.QAbstractButton, QtWidgets.QAbstractSlider)


def _controls(widget: QtWidgets.QWidget) -> list[QtWidgets.QWidget]:
    return [c for c in widget.findChildren(QtWidgets.QWidget) if isinstance(c, CONTROLS) and c.isVisible()]


def _control_state(control: QtWidgets.QWidget) -> tuple:
    text = control.text() if hasattr(control, "text") else getattr(control, "currentText", str)()
    value = control.value() if hasattr(control, "value") else None
    checked = control.isChecked() if isinstance(control, QtWidgets.QAbstractButton) else None
    return type(control).__name__, text, value, checked, control.isEnabled(), control.geometry().getRect()


def _without_controls(widget: QtWidgets.QWidget, image: QtGui.QImage) -> QtGui.QImage:
    painter = QtGui.QPainter(image)
    for control in _controls(widget):
        painter.fillRect(QtCore.QRect(control.mapTo(widget, QtCore.QPoint(0, 0)), control.size()),
                         QtGui.QColor("magenta"))
    painter.end()
    return image


def check_same_picture(shown_widget: QtWidgets.QWidget, expected_widget: QtWidgets.QWidget, where: str) -> None:
    shown_states = [_control_state(c) for c in _controls(shown_widget)]
    fresh_states = [_control_state(c) for c in _controls(expected_widget)]
    assert shown_states == fresh_states, f"{where}: its controls differ from a fresh view's: {shown_states} != " \
                                         f"{fresh_states}"
    shown = _without_controls(shown_widget, shown_widget.grab().toImage())
    expected = _without_controls(expected_widget, expected_widget.grab().toImage())
    found = difference(shown, expected)
    if found:
        path = write_picture(shown, expected, where)
        raise AssertionError(f"{where}: the view after its updates differs from one built fresh: {found}; "
                             f"see {path}")
