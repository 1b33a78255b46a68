"""The steps exported as a GIF from the window: a progress dialog counts the frames, Cancel stops the
export and leaves nothing behind."""

from PySide6 import QtWidgets

from attention_explorer.views.export_progress import QtExportProgress


def test_a_gif_export_reports_each_frame_and_writes_the_file(make_window, tmp_path, monkeypatch):
    window = make_window(sentence="the cat sat")
    seen = []
    real_call = QtExportProgress.__call__

    def spy(self, done, total):
        seen.append((done, total))
        return real_call(self, done, total)

    monkeypatch.setattr(QtExportProgress, "__call__", spy)
    target = tmp_path / "steps.gif"
    assert window.export_to("steps", str(target))
    assert target.read_bytes()[:6] == b"GIF89a"
    assert len(seen) > 2 and seen[-1][0] == seen[-1][1], "the last report says it is complete"
    assert [done for done, _ in seen[:-1]] == list(range(1, len(seen)))
    assert not [w for w in QtWidgets.QApplication.topLevelWidgets()
                if isinstance(w, QtExportProgress) and w.isVisible()], "the dialog is gone afterwards"


def test_cancel_stops_the_export_and_writes_nothing(make_window, tmp_path, monkeypatch):
    window = make_window(sentence="the cat sat")
    monkeypatch.setattr(QtExportProgress, "wasCanceled", lambda self: self.frames_seen >= 3)
    warnings = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda *a: warnings.append(a))
    target = tmp_path / "steps.gif"
    assert not window.export_to("steps", str(target))
    assert not target.exists() and list(tmp_path.iterdir()) == []
    assert window.statusBar().currentMessage() == "Export cancelled; nothing was written"
    assert warnings == [], "a cancel is not an error"
    assert window.controller.trace.tokens == ["the", "cat", "sat"]


def test_the_progress_dialog_counts_frames(qtbot):
    dialog = QtExportProgress("the steps as an animated GIF")
    qtbot.addWidget(dialog)
    assert dialog(5, 40)
    assert dialog.maximum() == 40 and dialog.value() == 5
    assert dialog.labelText() == "Exporting the steps as an animated GIF… (frame 5 of 40)"
    dialog.cancel()
    assert not dialog(6, 40)
