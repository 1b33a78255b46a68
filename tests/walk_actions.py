"""The random walk's actions: what a user (or a cat on the keyboard) can do in the window, done the way
they do it — picking from a combo box (which sends `activated`), ticking boxes, the menus, the mouse
over chips, heatmap cells, arc ends and the model view's thumbnails, right-clicks, the docks — on the
toy models and on real ones (the tiny committed checkpoints always; MiniLM and SmolLM2 when installed).

Dialogs answer at once (see quiet_dialogs): a file dialog names a file of the walk's own, a message
box is dismissed, a context menu picks one of its entries, a modal dialog is cancelled.
"""

from __future__ import annotations

import collections
import faulthandler
import functools
import json
import os
import random
import tempfile
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer import engine
from attention_explorer.app import MainWindow
from attention_explorer.engine.pretrained import installed_models
from attention_explorer.labs.lesson_list import LESSONS
from attention_explorer.views import theme
from attention_explorer.views.arc_diagram import LEFT, RIGHT
from damaged_models import all_cases

DATA = Path(__file__).parent / "engine" / "pretrained" / "data"
TINY_FOLDERS = [DATA / "tiny-bert", DATA / "tiny-gpt2", DATA / "tiny-llama", DATA / "tiny-bart"]
TINY_GGUF = DATA / "tiny-llama.gguf"
# what a user may do while a decoder writes (Walk._act_while_writing)
WHILE_WRITING = ("hover", "mouse_over_heatmap", "mouse_over_arcs", "model_view_mouse", "real_bar", "pin", "steps",
                 "heatmap_controls", "option_box", "set_text", "type_keys", "real_model", "resize_window")
LOAD_WAIT_MS = 60_000
PATIENCE_MS, CANCEL_WAIT_MS = 20_000, 10_000  # a long real-model forward is cancelled, and must stop
CENSUS_PATIENCE_MS = 3_000  # a census still running then is cancelled (SmolLM2's battery takes ~10 s)
WINDOW_SIZES = ((1000, 640), (1280, 720), (1280, 820), (1600, 900), (1920, 1080))  # small laptop … desktop

ODD_TEXTS = (
    "the cat sat on the mat", "🐱 the cat zebra 🐶", "THE CAT SAT", "straße the dog", "the ca\u0301t sat",
    "שלום the cat עולם", "مرحبا the mat", "the  cat\tsat\non the mat", "", "   ", "!!! ??? ...",
    "the 👩‍👩‍👧 cat", "it's the cat's mat", "the cat \udcff sat", "ǅ the ﬁsh", "the cat\u200b sat",
    "a" * 300, "the " * 60, "x" * 40_000, "The animal didn't cross the street because it was too tired.",
)
JUNK_VALUES = ("abc", "nan", "inf", "-inf", "1e999", "", " ", "1,5", "0x10", "½", "0.5", "-2", "3", "1e-300")
JUNK_WORDS = ("zebra", "", "dog!", "a-b", "Cat", "the", "ca\u0301t", "🐱", "x" * 200, "new word")


@functools.cache
def _damaged_cases() -> tuple[list, list]:
    """Every kind of damaged copy, and those whose weights (a safetensors file, a shard, the GGUF) are a FIFO."""
    cases = all_cases()
    return cases, [c for c in cases if "FIFO" in c.kind and ("safetensors" in c.kind or "shard" in c.kind
                                                             or ".gguf: " in c.kind)]


class Answers:
    """What the walk's dialogs answer next (set by the action that opens one)."""

    def __init__(self):
        self.directory = ""
        self.open_file = ""
        self.save_file = ""
        self.menu_choice: random.Random | None = None


def quiet_dialogs(patch, answers: Answers) -> None:
    """Message boxes answer at once (the walk checks state, not wording); file dialogs name the file the
    action chose; a context menu picks one of its entries at random; any other modal dialog is cancelled.
    (Patched on the Python side: PySide cannot replace a method such as QMenu.exec of Qt's own classes.)"""
    buttons = QtWidgets.QMessageBox.StandardButton
    patch(QtWidgets.QMessageBox, "warning", lambda *a, **k: buttons.Ok)
    patch(QtWidgets.QMessageBox, "information", lambda *a, **k: buttons.Ok)
    patch(QtWidgets.QMessageBox, "question", lambda *a, **k: buttons.Discard)
    patch(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (answers.save_file, ""))
    patch(QtWidgets.QFileDialog, "getExistingDirectory", lambda *a, **k: answers.directory)
    patch(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (answers.open_file, ""))
    patch(QtWidgets.QDialog, "exec", lambda self: QtWidgets.QDialog.DialogCode.Rejected)

    def pick(_window, menu):
        actions = [a for a in menu.actions() if a.isEnabled() and not a.isSeparator()]
        if actions and answers.menu_choice is not None:
            answers.menu_choice.choice(actions).trigger()
    patch(MainWindow, "run_menu", pick)  # PySide cannot patch QMenu.exec itself


def settle() -> None:
    """What the event loop would do next: handle posted events, and delete the objects whose
    deleteLater() ran (outside an event loop processEvents() never deletes them)."""
    QtWidgets.QApplication.processEvents()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)


def wait_idle(controller, ms: int = LOAD_WAIT_MS, cancel=None) -> bool:
    """Until the worker has delivered its last load or forward (real models run on it). With `cancel`
    (what clicks Cancel), a load or forward still running after PATIENCE_MS is cancelled as a user
    would, and must end within CANCEL_WAIT_MS: a real model reads its whole context, so a 5,000-word
    sentence kept from a toy model takes SmolLM2 minutes. Returns whether it was cancelled."""
    deadline = QtCore.QDeadlineTimer(PATIENCE_MS if cancel is not None else ms)
    while controller.busy and not deadline.hasExpired():
        QTest.qWait(5)
    cancelled = cancel is not None and controller.busy
    if cancelled:
        cancel()
        deadline = QtCore.QDeadlineTimer(CANCEL_WAIT_MS)
        while controller.busy and not deadline.hasExpired():
            QTest.qWait(5)
    waited = f"{PATIENCE_MS} ms and a Cancel" if cancelled else f"{ms} ms"
    assert not controller.busy, f"the window was still busy after {waited}; its threads:\n{thread_stacks()}"
    settle()
    return cancelled


def thread_stacks() -> str:
    """Where every thread is, for a failure that may be a hang (the worker's stack says which)."""
    with tempfile.TemporaryFile("w+") as dump:
        faulthandler.dump_traceback(dump, all_threads=True)
        dump.seek(0)
        return dump.read()


class Walk:
    """One walk: `step()` does one random action and lets the window settle."""

    def __init__(self, window, folder: Path, seed: int, answers: Answers):
        self.window = window
        self.controller = window.controller
        self.folder = folder
        self.rng = random.Random(seed)
        self.answers = answers
        answers.menu_choice = self.rng
        self.counts: collections.Counter[str] = collections.Counter()
        self.expected_errors = 0
        self.good_model = folder / "good.json"
        self.good_model.write_text(json.dumps(engine.model_to_dict(engine.load_builtin("cats-chase-mice"))))
        self.bad_models = self._bad_model_files()
        # the damaged copies' recipes (1,617 of them, 57 MB with the originals they change) are made now:
        # made at the first damaged copy, they counted as the app's memory growing (seed 112, action 251)
        _damaged_cases()
        self.installed = list(installed_models())  # MiniLM and SmolLM2 where their packages are installed
        self.actions = [(weight, getattr(self, name)) for name, weight in (
            ("set_text", 8), ("type_keys", 4), ("option_box", 8), ("option_check", 6), ("hover", 6),
            ("mouse_over_chip", 2), ("mouse_over_heatmap", 4), ("mouse_over_arcs", 3), ("pin", 5), ("steps", 6),
            ("lesson", 2), ("edit_value", 5), ("add_word", 2), ("rename_feature", 1), ("undo_redo", 5),
            ("open_model_file", 2), ("builtin_model", 3), ("export", 2), ("colormap_menu", 3), ("reset_model", 1),
            ("long_sentence", 0.05), ("gif", 0.1), ("real_model", 3), ("real_bar", 8), ("model_view_mouse", 4),
            ("context_menu", 1), ("dock", 2), ("cancel_load", 0.5), ("switch_during_forward", 0.5),
            ("heatmap_controls", 2), ("generation", 3), ("encoder_decoder", 4), ("write_target", 4),
            ("census", 3), ("resize_window", 1),
        )]
        self._weights = [w for w, _ in self.actions]

    def _bad_model_files(self) -> list[Path]:
        bad = {"broken.json": "{ not json", "deep.json": "[" * 1500 + "]" * 1500, "empty.json": "",
               "list.json": "[1, 2]", "nan.json": '{"vocabulary": NaN}', "bom.json": "\ufeff{}"}
        paths = []
        for name, text in bad.items():
            (self.folder / name).write_text(text)
            paths.append(self.folder / name)
        paths += [self.folder / "missing.json", self.folder]
        if hasattr(os, "mkfifo"):
            os.mkfifo(self.folder / "pipe.json")
            paths.append(self.folder / "pipe.json")
        return paths

    # --- running --------------------------------------------------------------------------------
    def step(self) -> str:
        action = self.rng.choices(self.actions, weights=self._weights)[0][1]
        action()
        settle()
        if wait_idle(self.controller, cancel=self.window.pretrained.cancel_button.click):
            self.counts["long load cancelled"] += 1
        self.counts[action.__name__] += 1
        return action.__name__

    def _choose(self, box: QtWidgets.QComboBox) -> None:
        """Pick an entry as a user does: the index changes, then `activated` is sent."""
        items = [i for i in range(box.count()) if box.itemData(i, QtCore.Qt.ItemDataRole.AccessibleDescriptionRole)
                 != "separator" and box.model().item(i) is not None and box.model().item(i).isEnabled()]
        if not items or not box.isEnabled():
            return
        index = self.rng.choice(items)
        box.setCurrentIndex(index)
        box.activated.emit(index)
        box.textActivated.emit(box.itemText(index))

    def _mouse_to(self, widget: QtWidgets.QWidget, point: QtCore.QPoint) -> None:
        """Arrive at `point` from a neighbouring pixel, a hand's pace after the last move (pyqtgraph drops
        moves less than 10 ms apart)."""
        QTest.qWait(12)
        QTest.mouseMove(widget, point + QtCore.QPoint(2, 1))
        QTest.qWait(12)
        QTest.mouseMove(widget, point)

    # --- text -----------------------------------------------------------------------------------
    def set_text(self):
        text = self.rng.choice(ODD_TEXTS)
        if self.rng.random() < 0.5:
            self.window.sentence_box.setPlainText(text)  # as a paste: through the box
        else:
            self.controller.set_sentence(text)

    def type_keys(self):
        """Keys typed into the sentence box of the main window, made active first as a user's click makes
        it: sent to a box whose window is not active (the census window was), Qt's text box took them and
        left its caret on for a full repaint only, which no user can do (seed 106, action 28)."""
        box = self.window.sentence_box
        self.window.activateWindow()
        QTest.qWaitForWindowActive(self.window, 1000)
        box.setFocus()
        keys = "".join(self.rng.choice("the cat sat on mat  ") for _ in range(self.rng.randint(1, 6)))
        QTest.keyClicks(box, keys)
        if self.rng.random() < 0.3:
            QTest.keyClick(box, QtCore.Qt.Key.Key_Backspace)
        if self.rng.random() < 0.2:
            QTest.keyClick(box, QtCore.Qt.Key.Key_Escape)

    def long_sentence(self):
        if self.controller.is_real:
            return
        words = sorted(self.controller.model.vocabulary)
        self.controller.set_sentence(" ".join(self.rng.choice(words) for _ in range(5000)))

    # --- the toolbar ----------------------------------------------------------------------------
    def option_box(self):
        bar = self.window.options_bar
        self._choose(self.rng.choice([bar.model_box, bar.heads, bar.head, bar.matrix]))

    def option_check(self):
        checks = [c for c in self.window.options_bar.findChildren(QtWidgets.QCheckBox) if c.isEnabled()]
        if checks:
            self.rng.choice(checks).click()

    def builtin_model(self):
        bar = self.window.options_bar
        index = bar.model_box.findData(self.rng.choice(engine.builtin_model_names()))
        bar.model_box.setCurrentIndex(index)
        bar.model_box.activated.emit(index)

    def real_model(self):
        """A real model, as a user opens one: from the model list (the installed ones), File ▸ Open model
        folder, or File ▸ Open on a .gguf; now and then a damaged copy or one whose weights are a FIFO."""
        way = self.rng.random()
        if way < 0.3:  # a few per walk of 500 actions
            self._open_damaged_copy()
        elif self.installed and way < 0.5:
            bar = self.window.options_bar
            index = bar.model_box.findData(self.rng.choice(self.installed))
            bar.model_box.setCurrentIndex(index)
            bar.model_box.activated.emit(index)
        elif way < 0.8:
            self.answers.directory = str(self.rng.choice(TINY_FOLDERS))
            self.window.pretrained.open_folder_action.trigger()
        else:
            self.answers.open_file = str(TINY_GGUF)
            self.window.open_action.trigger()

    def _open_damaged_copy(self):
        """A copy from the damaged-model generator (tests/damaged_models), a third of the time one whose
        weights are a FIFO, made in the walk's folder and opened by the menus: the window must end un-busy,
        with one message and the model unchanged, or with none and the copy open."""
        cases, weight_fifos = _damaged_cases()
        case = self.rng.choice(weight_fifos if self.rng.random() < 0.3 else cases)
        path = case.build(self.folder / f"damaged-{self.counts['real_model']}")
        before, shown, warning = self.controller.real_model, [], QtWidgets.QMessageBox.warning
        QtWidgets.QMessageBox.warning = lambda *args: (shown.append(args[2]), warning(*args))[1]
        try:
            if path.is_dir():
                self.answers.directory = str(path)
                self.window.pretrained.open_folder_action.trigger()
            else:
                self.answers.open_file = str(path)
                self.window.open_action.trigger()
            wait_idle(self.controller)
        finally:
            QtWidgets.QMessageBox.warning = warning
        assert len(shown) <= 1, f"{case.kind}: {len(shown)} messages: {shown}"
        if shown:
            assert self.controller.real_model is before, f"{case.kind}: refused but the model changed"
        else:
            assert self.controller.model_source == str(path), f"{case.kind}: neither refused nor opened"

    def real_bar(self):
        """The real model's own controls: its layer, the readings, the shown head off, all heads on."""
        bar = self.window.pretrained.bar
        if not self.controller.is_real:
            return
        choice = self.rng.random()
        if choice < 0.3:
            self._choose(bar.layer)
        elif choice < 0.45:
            self._choose(self.window.options_bar.head)
        elif choice < 0.9:
            self.rng.choice([bar.merge, bar.hide_specials, bar.hide_first, bar.rollout, bar.ablate]).click()
        elif bar.heads_on.isEnabled():
            bar.heads_on.click()

    def encoder_decoder(self):
        """An encoder–decoder's own controls: its target (odd texts too, typed or pasted) and which of its
        attentions is shown; without one open, now and then tiny-bart is opened (File ▸ Open model folder),
        so that a walk spends some of its actions on one."""
        if not self.controller.is_encoder_decoder:
            if self.rng.random() < 0.25:
                self.answers.directory = str(DATA / "tiny-bart")
                self.window.pretrained.open_folder_action.trigger()
            return
        self.counts["encoder_decoder, one open"] += 1
        choice = self.rng.random()
        if choice < 0.4:
            self._choose(self.window.pretrained.bar.part)
        elif choice < 0.7:
            edit = self.window.pretrained.target_box.edit
            text = self.rng.choice(ODD_TEXTS)
            edit.setText(text)
            edit.textEdited.emit(text)  # as a paste: the box says it was edited
        else:
            edit = self.window.pretrained.target_box.edit
            edit.setFocus()
            for _ in range(self.rng.randint(1, 6)):
                QTest.keyClick(edit, self.rng.choice([QtCore.Qt.Key.Key_A, QtCore.Qt.Key.Key_Space,
                                                      QtCore.Qt.Key.Key_Backspace, QtCore.Qt.Key.Key_Z]))

    def write_target(self):
        """An encoder–decoder's Write, pressed with the mouse: now and then after typing a count into its
        spin box (junk too), or while a run is going (the button is then off and the click does nothing),
        or followed at once by an edit of the source or the target, or the shown head switched off, before
        the target written comes back (it must not land over them). Without one open, tiny-bart is opened
        first (File ▸ Open model folder), so that the walk's seeds reach the button."""
        c = self.controller
        if not c.is_encoder_decoder:
            self.answers.directory = str(DATA / "tiny-bart")
            self.window.pretrained.open_folder_action.trigger()
            wait_idle(c)
            if not c.is_encoder_decoder:
                return
        box = self.window.pretrained.target_box
        if self.rng.random() < 0.4:  # typed, as into any spin box: a value out of range is clamped or refused
            box.tokens.setFocus()
            box.tokens.selectAll()
            QTest.keyClicks(box.tokens, self.rng.choice(["1", "3", "8", "64", "0", "99", "abc", ""]))
            QTest.keyClick(box.tokens, QtCore.Qt.Key.Key_Return)
        if self.rng.random() < 0.2:  # a run going: a new target pasted, then Write at once
            self._paste_target()
        enabled, before = box.write_button.isEnabled(), c.target
        self.counts["write_target, pressed" if enabled else "write_target, pressed while off"] += 1
        QTest.mouseClick(box.write_button, QtCore.Qt.MouseButton.LeftButton)
        then = self.rng.random()
        if then < 0.15:  # (the box hands every change to the controller at once: the write is superseded)
            text = self.rng.choice(ODD_TEXTS[:8])
            changed = text != c.sentence
            self.window.sentence_box.setPlainText(text)
            wait_idle(c)
            assert not changed or c.target == before, "a target written for the old source landed"
        elif then < 0.3:
            text = self._paste_target()
            wait_idle(c)
            assert text == before or c.target == text, "a target written landed over the one typed since"
        elif then < 0.4 and self.window.pretrained.bar.ablate.isEnabled():
            self.window.pretrained.bar.ablate.click()
            wait_idle(c)
            assert c.target == before, "a target written with other heads landed"
        else:
            wait_idle(c)
            if enabled and c.sentence.strip():
                self.counts["write_target, written"] += c.target_written is not None
                assert c.target_written is not None or c.error or c.write_error, \
                    "Write came back with neither a target nor a message"
                if c.target_written is not None:
                    self._scrub_target(box)
            elif not enabled:
                assert c.target == before and c.target_written is None, "Write did something while it was off"
        assert box.edit.text() == c.target, "the Target box does not hold the target the views read"

    def _scrub_target(self, box) -> None:
        """The scrubber under the Target box, as a user steps it: its buttons, or ← / → on its slider."""
        c = self.window.controller
        for _ in range(self.rng.randint(0, 4)):
            if not box.scrubber.isVisible():
                return
            self.counts["write_target, scrubbed"] += 1
            if self.rng.random() < 0.5:
                button = self.rng.choice([box.back, box.forth])
                if button.isEnabled():
                    QTest.mouseClick(button, QtCore.Qt.MouseButton.LeftButton)
            else:
                box.slider.setFocus()
                QTest.keyClick(box.slider, self.rng.choice([QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_Right]))
            if self.rng.random() < 0.7:
                wait_idle(c)
        wait_idle(c)
        shown = c.target_shown
        assert 1 <= shown == box.slider.value() <= len(c.target_written.ids), "the slider is not the step shown"

    def _paste_target(self) -> str:
        edit = self.window.pretrained.target_box.edit
        text = self.rng.choice(ODD_TEXTS[:8])
        edit.setText(text)
        edit.textEdited.emit(edit.text())  # as a paste: the box says it was edited, with what it holds
        return text

    def heatmap_controls(self):
        heatmap = self.window.heatmap
        choice = self.rng.random()
        if choice < 0.4:
            self._choose(heatmap.colour_scale_box)
        elif choice < 0.7:
            self._choose(heatmap.colormap_box)
        elif heatmap.fit_button.isVisible():
            heatmap.fit_button.click()
        else:
            heatmap.graphics.setFocus()
            QTest.keyClick(heatmap.graphics, self.rng.choice([QtCore.Qt.Key.Key_Plus, QtCore.Qt.Key.Key_Minus,
                                                              QtCore.Qt.Key.Key_PageDown, QtCore.Qt.Key.Key_0]))

    def colormap_menu(self):
        self.window.colormap_actions[self.rng.choice(theme.COLORMAPS)].trigger()

    # --- the mouse ------------------------------------------------------------------------------
    def hover(self):
        n = self.controller.trace.n if self.controller.trace else 0
        index = self.rng.choice([None, -1, n, n + 3, *range(max(n, 1))])
        self.controller.set_hovered(index, self.rng.choice(["looking", "looked_at"]))

    def mouse_over_chip(self):
        chips = [c for c in self.window.chips.chips if c.isVisible()]
        if chips:
            chip = self.rng.choice(chips)
            self._mouse_to(chip, chip.rect().center() + QtCore.QPoint(self.rng.randint(-2, 2), 0))
            if self.rng.random() < 0.3:
                QTest.mouseClick(chip, QtCore.Qt.MouseButton.LeftButton)

    def mouse_over_heatmap(self):
        heatmap = self.window.heatmap
        trace = self.controller.trace
        if trace is None or not heatmap.graphics.isVisible():
            return
        rows, cols = heatmap.visible_cells()
        if not rows or not cols:
            return
        row, col = self.rng.choice(rows), self.rng.choice(cols)
        target = self.rng.random()
        view = heatmap.plot.getViewBox()
        if target < 0.6:  # a cell
            scene = view.mapViewToScene(QtCore.QPointF(col, row))
        elif target < 0.8:  # its row's label, left of the matrix
            scene = view.mapViewToScene(QtCore.QPointF(-0.5, row)) - QtCore.QPointF(12, 0)
        else:  # its column's label, above the matrix
            scene = view.mapViewToScene(QtCore.QPointF(col, -0.5)) - QtCore.QPointF(0, 10)
        point = heatmap.graphics.mapFromScene(scene)
        self._mouse_to(heatmap.graphics.viewport(), point)
        if self.rng.random() < 0.2:
            QTest.mouseClick(heatmap.graphics.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=point)

    def mouse_over_arcs(self):
        arcs = self.window.arcs
        drawn = arcs.drawn_labels(self.rng.choice([LEFT, RIGHT])) if arcs.graphics.isVisible() else []
        if not drawn:
            return
        _index, rect = self.rng.choice(drawn)
        point = arcs.graphics.mapFromScene(rect.center())
        self._mouse_to(arcs.graphics.viewport(), point)
        if self.rng.random() < 0.3:
            QTest.mouseClick(arcs.graphics.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=point)
        elif self.rng.random() < 0.3:
            self._mouse_to(arcs.graphics.viewport(), QtCore.QPoint(arcs.graphics.width() // 2, 3))  # away

    def model_view_mouse(self):
        view = self.window.pretrained.model_view
        layers, heads = view.grid_shape()
        if not layers or not view.isVisible():
            return
        layer, head = self.rng.randrange(layers), self.rng.randrange(heads)
        rect = view.cell_rect(layer, head)
        point = QtCore.QPoint(int(rect.left() + self.rng.random() * rect.width()),
                              int(rect.top() + self.rng.random() * rect.height()))
        view.scroll.ensureVisible(point.x(), point.y())
        self._mouse_to(view.grid, point)
        choice = self.rng.random()
        if choice < 0.25:
            QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.LeftButton, pos=point)
        elif choice < 0.4:
            QTest.mouseClick(view.grid, QtCore.Qt.MouseButton.RightButton, pos=point)  # a head off or on

    def context_menu(self):
        """Right-click a view: its menu picks one entry (export image, copy, CSV); or a decoder's next
        tokens, anywhere on their rows: copy one token or all of them."""
        name = self.rng.choice(["heatmap", "arcs", "next tokens"])
        if name == "next tokens":
            rows = self.window.pretrained.next_tokens.candidates
            if rows.isVisible():  # what Qt sends a widget on a right-click (QTest's click sends mouse events alone)
                point = QtCore.QPoint(self.rng.randrange(rows.width()), self.rng.randrange(rows.height()))
                QtWidgets.QApplication.sendEvent(rows, QtGui.QContextMenuEvent(
                    QtGui.QContextMenuEvent.Reason.Mouse, point, rows.mapToGlobal(point)))
            return
        widget = self.window.views[name].export_widget()
        if widget.isVisible():
            QTest.mouseClick(widget.viewport(), QtCore.Qt.MouseButton.RightButton,
                             pos=QtCore.QPoint(widget.width() // 2, widget.height() // 2))

    def pin(self):
        n = self.controller.trace.n if self.controller.trace else 0
        if self.rng.random() < 0.3:
            QTest.keyClick(self.window, QtCore.Qt.Key.Key_Escape)
        elif n:
            self.controller.toggle_pinned(self.rng.randrange(n))

    # --- steps, lessons, docks ------------------------------------------------------------------
    def steps(self):
        choice = self.rng.random()
        if choice < 0.3:
            self.controller.set_step(self.rng.randint(-3, 20))
        elif choice < 0.5:
            buttons = self.window.timeline.strip.buttons()
            self.rng.choice(buttons).click()
        elif choice < 0.6:
            self.window.timeline.tables_button.click()
        else:
            key = self.rng.choice([QtCore.Qt.Key.Key_Right, QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_Home,
                                   QtCore.Qt.Key.Key_End])
            QTest.keyClick(self.window, key)

    def lesson(self):
        """A lesson opened from the menu, the lessons window closed, or one of the open lesson's own
        controls used (a box chosen from, a number stepped or typed, a slider moved, a box ticked, a text
        typed) while the main window goes on changing under it."""
        lessons = self.window.lessons_window
        chance = self.rng.random()
        if lessons is None or not lessons.isVisible() or chance < 0.3:
            self.window.lesson_actions[self.rng.choice(LESSONS)[0]].trigger()
        elif chance < 0.9:
            self._use_a_control(lessons.current_panel())
        else:
            lessons.close()

    def _use_a_control(self, panel: QtWidgets.QWidget) -> None:
        controls = [w for w in panel.findChildren(QtWidgets.QWidget) if w.isVisible() and w.isEnabled() and isinstance(
            w, (QtWidgets.QComboBox, QtWidgets.QAbstractSpinBox, QtWidgets.QAbstractSlider, QtWidgets.QCheckBox,
                QtWidgets.QLineEdit)) and not isinstance(w.parent(), (QtWidgets.QAbstractSpinBox, QtWidgets.QComboBox))]
        if not controls:
            return
        control = self.rng.choice(controls)
        self.counts["lesson controls used"] += 1
        if isinstance(control, QtWidgets.QComboBox):
            self._choose(control)
        elif isinstance(control, QtWidgets.QAbstractSpinBox):
            control.setFocus()
            if self.rng.random() < 0.7:
                key = self.rng.choice((QtCore.Qt.Key.Key_Up, QtCore.Qt.Key.Key_Down, QtCore.Qt.Key.Key_PageUp,
                                       QtCore.Qt.Key.Key_PageDown))
                QTest.keyClick(control, key)
            else:  # a number typed over the old one, or junk
                control.selectAll()
                QTest.keyClicks(control, self.rng.choice(JUNK_VALUES + ("0", "7", "999999")))
                QTest.keyClick(control, QtCore.Qt.Key.Key_Return)
        elif isinstance(control, QtWidgets.QAbstractSlider):
            control.triggerAction(self.rng.choice((QtWidgets.QAbstractSlider.SliderAction.SliderPageStepAdd,
                                                   QtWidgets.QAbstractSlider.SliderAction.SliderPageStepSub,
                                                   QtWidgets.QAbstractSlider.SliderAction.SliderToMinimum,
                                                   QtWidgets.QAbstractSlider.SliderAction.SliderToMaximum)))
        elif isinstance(control, QtWidgets.QCheckBox):
            control.click()
        elif not control.isReadOnly():  # a text pasted over the old one (QTest types only Latin-1 keys)
            control.setFocus()
            control.selectAll()
            control.insert(self.rng.choice(ODD_TEXTS)[:200])
            QTest.keyClick(control, QtCore.Qt.Key.Key_Return)

    def census(self):
        """View ▸ Head census…, then what a user does there: a measure chosen, Run (Cancel when it runs
        long, and it must stop), the grid hovered or clicked (which opens that head in the main window),
        a ranked head clicked, the top heads switched off there or in the main window, Fit, a setting
        changed, or the window closed."""
        launcher = self.window.pretrained.census
        window = launcher.window
        if window is None or not window.isVisible():
            launcher.action.trigger()
            self._census_opened(launcher.window)
            return
        census, view = window.census, window.view
        what = self.rng.choice(("measure", "run", "run", "grid", "grid", "ranked", "ablate", "apply", "fit",
                                "settings", "close"))
        if what == "measure":
            self._choose(window.measure_box)
        elif what == "run" and window.run_button.isEnabled():
            window.run_button.click()
            self._census_finished(census, window.cancel_button)
        elif what == "grid" and view.plot.graphics.isVisible():
            rows, cols = view.plot.visible_cells()
            if rows and cols:
                scene = view.plot.plot.getViewBox().mapViewToScene(
                    QtCore.QPointF(self.rng.choice(cols), self.rng.choice(rows)))
                point = view.plot.graphics.mapFromScene(scene)
                self._mouse_to(view.plot.graphics.viewport(), point)
                if self.rng.random() < 0.3:
                    QTest.mouseClick(view.plot.graphics.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=point)
        elif what == "ranked" and view.ranked.count():
            item = view.ranked.item(self.rng.randrange(view.ranked.count()))
            view.ranked.scrollToItem(item)
            QTest.mouseClick(view.ranked.viewport(), QtCore.Qt.MouseButton.LeftButton,
                             pos=view.ranked.visualItemRect(item).center())
        elif what == "ablate" and window.ablate_button.isEnabled():
            window.ablate_count.setValue(self.rng.choice((1, 3, 64)))
            window.ablate_button.click()
            self._census_finished(census, window.cancel_button)
        elif what == "apply" and window.apply_button.isEnabled():
            window.apply_button.click()
        elif what == "fit" and view.fit_button.isVisible():
            view.fit_button.click()
        elif what == "settings":
            self.rng.choice((window.exclude_first_box, window.exclude_diagonal_box)).click()
        elif what == "close":
            window.close()

    def _census_opened(self, window) -> None:
        """Where the census window opens (X11 puts it beside the main window: see walk_x11)."""

    @staticmethod
    def _census_finished(census, cancel_button) -> None:
        """Until a census run or its heads' ablation ends; one still running after CENSUS_PATIENCE_MS
        is cancelled as a user would, and must stop within CANCEL_WAIT_MS."""
        deadline = QtCore.QDeadlineTimer(CENSUS_PATIENCE_MS)
        while census.busy and not deadline.hasExpired():
            QTest.qWait(5)
        if census.busy:
            cancel_button.click()
            deadline = QtCore.QDeadlineTimer(CANCEL_WAIT_MS)
            while census.busy and not deadline.hasExpired():
                QTest.qWait(5)
        assert not census.busy, f"the census was still busy after a Cancel; its threads:\n{thread_stacks()}"
        settle()

    def resize_window(self):
        """The main window dragged to another size, from a small laptop's to a desktop's."""
        self.window.resize(*self.rng.choice(self.window_sizes()))
        self._window_resized()

    def window_sizes(self) -> tuple[tuple[int, int], ...]:
        return WINDOW_SIZES

    def _window_resized(self) -> None:
        """After the main window changed size (X11 puts the other windows beside it again: see walk_x11)."""

    def dock(self):
        """View menu: the model editor, the steps, the model view, shown or put away."""
        docks = [self.window.model_editor_dock, self.window.steps_dock, self.window.pretrained.dock]
        action = self.rng.choice(docks).toggleViewAction()
        if action.isEnabled():
            action.trigger()

    # --- the model editor -----------------------------------------------------------------------
    def edit_value(self):
        if self.controller.is_real:
            return
        model = self.controller.model
        field = self.rng.choice(["embedding", "w_q", "w_k", "w_v"])
        rows = len(model.vocabulary) if field == "embedding" else model.d_model
        cols = model.d_model if field == "embedding" else model.d_proj
        self._expect_refusal(lambda: self.window.model_editor.set_value(
            field, self.rng.randrange(rows), self.rng.randrange(cols), self.rng.choice(JUNK_VALUES)))

    def add_word(self):
        if self.controller.is_real:
            return
        row = [self.rng.choice(JUNK_VALUES) for _ in range(self.controller.model.d_model)]
        self._expect_refusal(lambda: self.window.model_editor.add_word(self.rng.choice(JUNK_WORDS), row))

    def rename_feature(self):
        if self.controller.is_real:
            return
        index = self.rng.randrange(self.controller.model.d_model)
        self._expect_refusal(lambda: self.window.model_editor.rename_feature(index, self.rng.choice(JUNK_WORDS)))

    def undo_redo(self):
        editor = self.window.model_editor
        (editor.undo_action if self.rng.random() < 0.6 else editor.redo_action).trigger()

    def reset_model(self):
        if not self.controller.is_real:
            self.window.model_editor.reset()

    def _expect_refusal(self, edit):
        try:
            edit()
        except (engine.EngineError, ValueError):
            self.expected_errors += 1

    # --- files ----------------------------------------------------------------------------------
    def open_model_file(self):
        path = self.good_model if self.rng.random() < 0.4 else self.rng.choice(self.bad_models)
        before = (self.controller.model, self.controller.sentence, self.controller.real_model)
        if self.rng.random() < 0.5:
            self.answers.open_file = str(path)
            self.window.open_action.trigger()
            opened = self.controller.model_source == str(path)
        else:
            opened = self.window.open_model(str(path))
        if not opened:
            after = (self.controller.model, self.controller.sentence, self.controller.real_model)
            assert after == before, f"{path.name} changed the state"

    def export(self):
        kind = self.rng.choice(["heatmap", "arcs", "csv", "json", "steps", "model"])
        suffix = {"csv": ".csv", "json": ".json"}.get(kind, self.rng.choice([".png", ".svg"]))
        target = self.rng.choice([self.folder / f"out{suffix}", self.folder / "no-such-folder" / f"x{suffix}",
                                  self.good_model / f"x{suffix}", self.folder])
        before = self.good_model.read_bytes()
        self.window.export_to(kind, str(target), self.rng.choice([1, 2]), self.rng.random() < 0.2)
        assert self.good_model.read_bytes() == before, "an export target inside a file changed that file"

    def gif(self):
        if self.controller.trace is not None and self.controller.trace.n <= 8 and not self.controller.is_real:
            self.window.export_to("steps", str(self.folder / "steps.gif"))

    def generation(self):
        """A decoder writes: Generate (a few tokens, greedy or drawn), now and then Stop at once; the
        scrubber's buttons and keys; Export to a file of the walk's. The text box holds the prompt and
        what was written."""
        panel, c = self.window.pretrained.generation, self.controller
        if not panel.isVisible():
            return
        choice = self.rng.random()
        if choice < 0.45 and panel.generate_button.isEnabled():
            panel.tokens.setValue(self.rng.randint(1, 6))
            if self.rng.random() < 0.4:  # a draw, typed into the boxes (greedy again a third of the time)
                controls = panel.sampling
                for spin, values in ((controls.temperature, ["0", "0.7", "1.5"]), (controls.top_k, ["0", "3"]),
                                     (controls.top_p, ["1", "0.5"]), (controls.seed, ["0", "9"])):
                    if spin.isEnabled():
                        spin.selectAll()
                        QTest.keyClicks(spin, self.rng.choice(values))
                        QTest.keyClick(spin, QtCore.Qt.Key.Key_Return)
            panel.generate_button.click()
            if self.rng.random() < 0.3:
                panel.stop_button.click()
            else:
                self._act_while_writing()
            wait_idle(c, cancel=self.window.pretrained.cancel_button.click)
        elif choice < 0.8:
            widget = self.rng.choice([panel.back, panel.forth, panel.slider, panel.text])
            if isinstance(widget, QtWidgets.QAbstractButton):
                if widget.isEnabled():
                    widget.click()
            else:
                widget.setFocus()
                QTest.keyClick(widget, self.rng.choice([QtCore.Qt.Key.Key_Left, QtCore.Qt.Key.Key_Right]))
        elif panel.export_button.isEnabled():
            suffix = self.rng.choice([".json", ".csv"])
            self.answers.save_file = str(self.rng.choice([self.folder / f"gen{suffix}",
                                                          self.folder / "no-such-folder" / f"gen{suffix}"]))
            panel.export_button.click()
            self.answers.save_file = ""  # every other Save dialog is cancelled, as before
        generation = c.generation
        if generation is not None and not c.generating:
            assert c.sentence == generation.prompt + generation.written, "the text box lost what was written"

    def _act_while_writing(self):
        """A user does not wait for the decoder to end: a few of their actions while it writes (or reads the
        prompt), without waiting for the worker between them — a head off, a layer, a hover, a step of the
        scrubber, an edit, another model. Each found a view showing another text, model or heads than
        the window said, or an error, once the writing ended."""
        panel = self.window.pretrained.generation
        for _ in range(self.rng.randint(0, 3)):
            if not self.controller.generating:
                return
            if self.rng.random() < 0.25:
                button = self.rng.choice([panel.back, panel.forth, panel.stop_button])
                if button.isEnabled():
                    button.click()
                continue
            getattr(self, self.rng.choice(WHILE_WRITING))()

    # --- races ----------------------------------------------------------------------------------
    def cancel_load(self):
        """Open a real model and press Cancel while it loads: the current model stays."""
        self.answers.directory = str(self.rng.choice(TINY_FOLDERS))
        self.window.pretrained.open_folder_action.trigger()
        QTest.qWait(self.rng.randint(0, 20))
        if self.window.pretrained.cancel_button.isVisible():
            self.window.pretrained.cancel_button.click()

    def switch_during_forward(self):
        """A new text for the real model, then at once a toy model: the last choice wins."""
        if not self.controller.is_real:
            return
        self.window.sentence_box.setPlainText(self.rng.choice(ODD_TEXTS[:8]))
        QTest.qWait(self.rng.randint(0, 15))
        self.builtin_model()
        wait_idle(self.controller)
        assert not self.controller.is_real, "a toy model chosen during a forward lost to the forward"
