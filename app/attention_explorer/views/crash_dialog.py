"""The dialog shown when an unexpected error reaches the crash handler: what happened, where the log is.

Not modal: the window behind it still works and keeps everything the user had. While it is open,
the same or further errors only raise a count in it, so an error in a paint event gives one dialog.
"""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets


class QtCrashDialog(QtWidgets.QDialog):
    def __init__(self, summary: str, details: str, log_path: Path, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("crashDialog")
        self.setWindowTitle("Something went wrong")
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        self.details = details
        self._first_details = details
        self.repeats = 0
        self.log_path = Path(log_path)

        icon = QtWidgets.QLabel()
        icon.setPixmap(self.style().standardIcon(QtWidgets.QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(48))
        intro = QtWidgets.QLabel("<b>Attention Explorer ran into an unexpected error.</b><br>"
                                 "It carried on: your sentence, model and edits are as they were.")
        intro.setWordWrap(True)
        self.message = QtWidgets.QLabel(summary)
        self.message.setObjectName("crashMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.repeat_line = QtWidgets.QLabel()
        self.repeat_line.setObjectName("crashRepeats")
        self.repeat_line.hide()
        self.log_line = QtWidgets.QLabel(f"The full report is in the log file:<br><a href=\"{self._log_url()}\">"
                                         f"{self.log_path}</a>")
        self.log_line.setObjectName("crashLogLocation")
        self.log_line.setWordWrap(True)
        self.log_line.setOpenExternalLinks(False)
        self.log_line.linkActivated.connect(self._open_log_folder)
        self.log_line.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextBrowserInteraction)

        buttons = QtWidgets.QDialogButtonBox()
        self.copy_button = buttons.addButton("Copy details", QtWidgets.QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.setToolTip("Copy the error and its traceback, e.g. to paste into a bug report")
        self.copy_button.clicked.connect(self.copy_details)
        close = buttons.addButton(QtWidgets.QDialogButtonBox.StandardButton.Close)
        close.setDefault(True)
        buttons.rejected.connect(self.reject)

        text = QtWidgets.QVBoxLayout()
        for widget in (intro, self.message, self.repeat_line, self.log_line):
            text.addWidget(widget)
        row = QtWidgets.QHBoxLayout()
        row.addWidget(icon, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        row.addLayout(text, 1)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(buttons)
        self.setMinimumWidth(460)

    def repeat(self, summary: str, details: str) -> None:
        """Another error while this dialog is open: count it. "Copy details" gives the first and the
        latest report, so a storm of errors cannot make it grow without end."""
        self.repeats += 1
        self.repeat_line.setText(f"{self.repeats} more error{'s' if self.repeats != 1 else ''} since, "
                                 f"the last: {summary}")
        self.repeat_line.show()
        self.details = f"{self._first_details}\n\nThe latest of {self.repeats} more:\n{details}"

    def copy_details(self) -> None:
        QtGui.QGuiApplication.clipboard().setText(self.details)
        self.copy_button.setText("Copied")

    def _log_url(self) -> str:
        return QtCore.QUrl.fromLocalFile(str(self.log_path.parent)).toString()

    def _open_log_folder(self, url: str) -> None:
        QtGui.QDesktopServices.openUrl(QtCore.QUrl(url))


def show_crash_dialog(summary: str, details: str, log_path: Path) -> QtCrashDialog:
    """Show the dialog over the app's main window (the crash handler's `show`). Not over a message
    box that happens to be active: that one is deleted when it closes, and its children with it."""
    windows = [w for w in QtWidgets.QApplication.topLevelWidgets()
               if isinstance(w, QtWidgets.QMainWindow) and w.isVisible()]
    parent = windows[0] if windows else QtWidgets.QApplication.activeWindow()
    dialog = QtCrashDialog(summary, details, log_path, parent)
    dialog.show()
    dialog.raise_()
    return dialog
