"""Progress and Cancel for a long export from the window (the steps as an animated GIF).

The export calls `progress(done, total)` after each frame it draws; this answers with whether to go
on. The dialog is window-modal, so nothing in the window changes under the export while it runs,
and it appears only when the export lasts long enough to need it.
"""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class QtExportProgress(QtWidgets.QProgressDialog):
    def __init__(self, what: str, parent: QtWidgets.QWidget | None = None):
        super().__init__(f"Exporting {what}…", "Cancel", 0, 0, parent)
        self.setObjectName("exportProgress")
        self.setWindowTitle("Exporting")
        self.setWindowModality(QtCore.Qt.WindowModality.WindowModal)
        self.setMinimumDuration(400)  # a short export finishes before any dialog is seen
        self.setAutoClose(False)
        self.setAutoReset(False)
        self.frames_seen = 0

    def __call__(self, done: int, total: int) -> bool:
        """The export's progress callback: False once Cancel was pressed."""
        self.frames_seen = done
        if total > 0:
            self.setMaximum(total)
            self.setValue(min(done, total))
            self.setLabelText(f"{self.labelText().split(' (')[0]} (frame {done:,} of {total:,})")
        QtWidgets.QApplication.processEvents()  # paint the bar, take a click on Cancel
        return not self.wasCanceled()
