"""Render resources/icons/attention-explorer.svg to the PNG sizes desktops and PyInstaller ask for.

Linux menus want PNGs at fixed sizes (16 to 512 px) beside the SVG, and PyInstaller turns a PNG into
the Windows .ico and the macOS .icns itself (with Pillow), so these PNGs are the only icon files kept
in the repository. Qt's own SVG renderer draws them, so the icon needs nothing the app does not have.
Run it again after editing the SVG:

    python packaging/render_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SOURCE = ICONS / "attention-explorer.svg"
SIZES = (16, 32, 48, 64, 128, 256, 512)


def png_path(size: int) -> Path:
    return ICONS / f"attention-explorer-{size}.png"


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication(sys.argv[:1])  # fonts and painting need an application object
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        print(f"render_icons: cannot read {SOURCE}", file=sys.stderr)
        return 1
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        if not image.save(str(png_path(size))):
            print(f"render_icons: cannot write {png_path(size)}", file=sys.stderr)
            return 1
        print(png_path(size).relative_to(ICONS.parent.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
