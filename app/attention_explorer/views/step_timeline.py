"""The step timeline: the computation played step by step, each result filling in cell by cell.

The controller holds the step (so the heatmap and the arcs can follow it); how far the current
step's result has filled in is this view's own state, because nothing else shows partial results.

Keys. Space plays or pauses, ←/→ step, Home/End jump to the first/last step. They are QShortcuts
with the window as context, so they work wherever the focus is in the main window, except that
each one is switched off while the focused widget needs that key itself: anything you type in
(the sentence box, spin boxes, combo boxes), item lists, and — for Space only — a focused button,
which Space presses. A disabled shortcut leaves the key to the focused widget, so typing a space or
moving the cursor in the sentence box never plays or steps. The timeline takes the focus when
clicked, so one click on it (or anywhere that does not keep the focus) brings the keys back.
"""

from __future__ import annotations

from collections.abc import Iterator

from PySide6 import QtCore, QtGui, QtWidgets

from ..controller import LOOKED_AT, LOOKING, Controller
from ..engine.reading import layer_steps_note
from ..engine.steps import LAST_STEP, STEPS, skip_reason
from . import theme
from .matrix_panel import QtMatrixPanel
from .matrix_table import MatrixTable

SPEEDS = (2, 5, 10, 20, 50)  # cells (softmax: rows) per second
DEFAULT_SPEED = 10
HOLD_MS = 700                 # a finished or skipped step stays this long before the next one
GIF_PARTIAL_FRAMES = 4        # frames of a step filling in, before its finished frame
GIF_PARTIAL_MS, GIF_HOLD_MS = 150, 1400
UNLIMITED_PX = 16777215      # Qt's "no maximum size" (QWIDGETSIZE_MAX)
HINT = "Hover a result cell to see its arithmetic; click to keep it."

Key = QtCore.Qt.Key
TYPING_WIDGETS = (QtWidgets.QLineEdit, QtWidgets.QTextEdit, QtWidgets.QPlainTextEdit, QtWidgets.QAbstractSpinBox,
                  QtWidgets.QComboBox, QtWidgets.QAbstractItemView, QtWidgets.QAbstractSlider)
OWNS_ARROWS = "ownsArrowKeys"  # a widget with this property true steps its own thing with ← and →


def widget_needs_key(widget: QtWidgets.QWidget | None, key: Key) -> bool:
    """Whether the focused `widget` uses `key` itself, so the timeline must leave it alone."""
    if isinstance(widget, TYPING_WIDGETS):
        return True
    if key in (Key.Key_Left, Key.Key_Right):
        while widget is not None:
            if widget.property(OWNS_ARROWS):
                return True
            widget = widget.parentWidget()
    return key == Key.Key_Space and isinstance(widget, QtWidgets.QAbstractButton)


class QtStepTimeline(QtWidgets.QWidget):
    """Controls and strip on top, the current step's matrix panel below."""

    tables_shown_changed = QtCore.Signal(bool)

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self._playing = False
        self._advancing = False  # the step changes because play moved on (so it starts empty)
        self._stale = True       # the strip is behind the controller (it is only drawn while visible)
        self._panel_stale = False  # the tables are behind it: folded away, they are drawn when next read
        self.setFocusPolicy(QtCore.Qt.FocusPolicy.ClickFocus)

        style = self.style()
        pixmap = QtWidgets.QStyle.StandardPixmap
        self.first_button = self._button(style.standardIcon(pixmap.SP_MediaSkipBackward), "First step (Home)",
                                         self.go_first)
        self.back_button = self._button(style.standardIcon(pixmap.SP_MediaSeekBackward), "Step back (←)",
                                        self.step_back)
        self.play_button = self._button(style.standardIcon(pixmap.SP_MediaPlay), "Play (Space)", self.toggle_play)
        self.forward_button = self._button(style.standardIcon(pixmap.SP_MediaSeekForward), "Step forward (→)",
                                           self.step_forward)
        self.last_button = self._button(style.standardIcon(pixmap.SP_MediaSkipForward), "Last step (End)",
                                        self.go_last)
        self.speed = QtWidgets.QComboBox()
        self.speed.setFocusPolicy(QtCore.Qt.FocusPolicy.TabFocus)  # a click must not take the keys away
        for rate in SPEEDS:
            self.speed.addItem(f"{rate} cells/s", rate)
        self.speed.setCurrentIndex(SPEEDS.index(DEFAULT_SPEED))
        self.speed.setToolTip("How fast a result fills in while playing (softmax fills a row at a time)")

        self.strip = QtWidgets.QButtonGroup(self)
        self.strip.setExclusive(True)
        self.strip_widget = strip_widget = QtWidgets.QWidget()
        strip_layout = QtWidgets.QHBoxLayout(strip_widget)
        strip_layout.setContentsMargins(0, 0, 0, 0)
        strip_layout.setSpacing(2)
        for i, step in enumerate(STEPS):
            button = QtWidgets.QToolButton()
            button.setText(f"{i + 1} {step.short}")
            button.setCheckable(True)
            button.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Fixed)
            self.strip.addButton(button, i)
            strip_layout.addWidget(button)
        self.scrubber = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.scrubber.setRange(0, LAST_STEP)
        self.scrubber.setPageStep(1)
        self.scrubber.setTickPosition(QtWidgets.QSlider.TickPosition.TicksBelow)
        self.scrubber.setToolTip("Drag through the steps")

        controls = QtWidgets.QHBoxLayout()
        controls.setSpacing(2)
        for button in (self.first_button, self.back_button, self.play_button, self.forward_button, self.last_button):
            controls.addWidget(button)
        grid = QtWidgets.QGridLayout()
        grid.setContentsMargins(8, 4, 8, 0)
        grid.addLayout(controls, 0, 0)
        grid.addWidget(strip_widget, 0, 1)
        self.hint = QtWidgets.QLabel(HINT)
        self.hint.setStyleSheet(f"color: {theme.muted().name(QtGui.QColor.NameFormat.HexArgb)};")
        scrub_row = QtWidgets.QHBoxLayout()
        scrub_row.addWidget(self.scrubber, 1)
        scrub_row.addWidget(self.hint)
        self.tables_button = QtWidgets.QToolButton()
        self.tables_button.setText("Tables")
        self.tables_button.setCheckable(True)
        self.tables_button.setChecked(True)
        self.tables_button.setToolTip("Show or hide the step's tables (on a short screen they start hidden, "
                                      "so the heatmap and arcs keep their room)")
        self.tables_button.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        self.tables_button.toggled.connect(self.set_tables_shown)
        scrub_row.addWidget(self.tables_button)
        grid.addWidget(self.speed, 1, 0)
        grid.addLayout(scrub_row, 1, 1)
        grid.setColumnStretch(1, 1)

        self._panel = QtMatrixPanel()
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setWidget(self._panel)
        self.scroll.setWidgetResizable(False)  # the panel keeps its natural size: the figure it exports
        self.scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.scroll.setFocusPolicy(QtCore.Qt.FocusPolicy.NoFocus)
        self.scroll.setBackgroundRole(QtGui.QPalette.ColorRole.Base)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(grid)
        layout.addWidget(self.scroll, 1)

        self.timer = QtCore.QTimer(self)
        self.timer.timeout.connect(self.tick)
        self.shortcuts: dict[Key, QtGui.QShortcut] = {}
        for key, slot in ((Key.Key_Space, self.toggle_play), (Key.Key_Left, self.step_back),
                          (Key.Key_Right, self.step_forward), (Key.Key_Home, self.go_first),
                          (Key.Key_End, self.go_last)):
            shortcut = QtGui.QShortcut(QtGui.QKeySequence(key), self)
            shortcut.setContext(QtCore.Qt.ShortcutContext.WindowShortcut)
            shortcut.activated.connect(slot)
            self.shortcuts[key] = shortcut
        QtWidgets.QApplication.instance().focusChanged.connect(self._on_focus_changed)
        self._on_focus_changed(None, QtWidgets.QApplication.focusWidget())

        self.strip.idClicked.connect(self.go_to)
        self.scrubber.valueChanged.connect(self.go_to)
        self.speed.activated.connect(self._on_speed_changed)
        controller.step_changed.connect(self._on_step_changed)
        controller.trace_changed.connect(self._refresh)
        controller.head_changed.connect(self._refresh)
        controller.colormap_changed.connect(self._refresh)
        controller.focus_changed.connect(self._show_focus)
        self._refresh()

    @property
    def panel(self) -> QtMatrixPanel:
        """The current step's tables, drawn first if they were folded away when the step last changed
        (so a window that starts with them folded paints without building them)."""
        if self._panel_stale:
            self._draw_panel()
        return self._panel

    def wanted_height(self) -> int:
        """The height that shows the controls and the current step's tables without scrolling."""
        controls = self.layout().itemAt(0).sizeHint().height() + self.layout().spacing()
        scrollbar = self.scroll.horizontalScrollBar().sizeHint().height()
        return controls + self.panel.sizeHint().height() + scrollbar

    def tables_shown(self) -> bool:
        return not self.scroll.isHidden()

    def set_tables_shown(self, shown: bool) -> None:
        """Show the step's tables, or keep only the controls and the strip (a short strip the window
        can give the rest of its height to the heatmap and arcs)."""
        with QtCore.QSignalBlocker(self.tables_button):
            self.tables_button.setChecked(shown)
        if shown == self.tables_shown():
            return
        self.scroll.setVisible(shown)
        if shown and self._panel_stale:
            self._draw_panel()
        self.setMaximumHeight(UNLIMITED_PX if shown else self.sizeHint().height())
        self.tables_shown_changed.emit(shown)

    def _button(self, icon: QtGui.QIcon, tip: str, slot) -> QtWidgets.QToolButton:
        button = QtWidgets.QToolButton()
        button.setIcon(icon)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(slot)
        return button

    # --- playing --------------------------------------------------------------------------------
    def is_playing(self) -> bool:
        return self._playing

    def tick_ms(self) -> int:
        return round(1000 / self.speed.currentData())

    def play(self) -> None:
        """Fill in from where it stands; a finished step starts over, the finished last step from step 1."""
        if self.controller.step_trace is None:
            return
        if self.panel.filled() >= self.panel.unit_count():
            if self.controller.step >= self.controller.final_step():
                self._advance_to(0)
            else:
                self.panel.set_filled(0)
        self._set_playing(True)

    def pause(self) -> None:
        self._set_playing(False)

    def toggle_play(self) -> None:
        if self._playing:
            self.pause()
        else:
            self.play()

    def tick(self) -> None:
        """One animation frame: fill one more cell (row), or after a finished step go on to the next."""
        filled, units = self.panel.filled(), self.panel.unit_count()
        if filled < units:
            self.panel.set_filled(filled + 1)
            if filled + 1 == units:
                self.timer.setInterval(HOLD_MS)
            return
        if self.controller.step >= self.controller.final_step():
            self.pause()
            return
        self._advance_to(self.controller.step + 1)
        self.timer.setInterval(self.tick_ms() if self.panel.unit_count() else HOLD_MS)

    def _advance_to(self, step: int) -> None:
        self._advancing = True
        try:
            self.controller.set_step(step)
        finally:
            self._advancing = False
        self.panel.set_filled(0)

    def _set_playing(self, playing: bool) -> None:
        self._playing = playing
        if playing:
            self.timer.start(self.tick_ms())
        else:
            self.timer.stop()
        pixmap = QtWidgets.QStyle.StandardPixmap
        self.play_button.setIcon(self.style().standardIcon(pixmap.SP_MediaPause if playing else pixmap.SP_MediaPlay))
        self.play_button.setToolTip("Pause (Space)" if playing else "Play (Space)")

    def _on_speed_changed(self, *_):
        if self._playing and self.panel.filled() < self.panel.unit_count():
            self.timer.setInterval(self.tick_ms())

    # --- stepping -------------------------------------------------------------------------------
    def go_to(self, step: int) -> None:
        """Show `step` complete and stop playing."""
        self.pause()
        if step == self.controller.step:
            self.panel.set_filled(self.panel.unit_count(), follow=False)
        self.controller.set_step(step)

    def step_back(self) -> None:
        self.go_to(max(0, self.controller.step - 1))

    def step_forward(self) -> None:
        self.go_to(min(LAST_STEP, self.controller.step + 1))

    def go_first(self) -> None:
        self.go_to(0)

    def go_last(self) -> None:
        self.go_to(LAST_STEP)

    # --- controller → view ----------------------------------------------------------------------
    def _on_step_changed(self, step: int) -> None:
        if not self._advancing:
            self.pause()  # moved from elsewhere: show it finished
        self._show_step()

    def _refresh(self, *_):
        """New trace, head or colours: redraw the current step, keeping as much of its fill as fits."""
        if not self.isVisible():
            self._stale = True
            self._release_panel()
            return
        filled, units = self._panel.filled(), self._panel.unit_count()
        finished = filled >= units
        self._show_step()
        if self.controller.step_trace is not None and not finished and not self._panel_stale:
            self._panel.set_filled(min(filled, self._panel.unit_count()))

    def _show_step(self) -> None:
        if not self.isVisible():
            self._stale = True  # drawn when shown again: a closed timeline costs the typing nothing
            self._release_panel()
            return
        self._stale = False
        trace, step = self.controller.step_trace, self.controller.step
        with QtCore.QSignalBlocker(self.scrubber):
            self.scrubber.setValue(step)
        self.strip.button(step).setChecked(True)
        if trace is None:
            self.pause()
        self._style_strip()
        if self.tables_shown():
            self._draw_panel()
        else:
            self._panel_stale = True
            self._release_panel()

    def _release_panel(self) -> None:
        """The hidden tables let go of the trace they drew (drawn again when shown): they held a closed
        real model's layer, and with it the model's weights, 590 MB of SmolLM2 after a toy model was chosen."""
        if self._panel.holds_trace():
            self._panel.show_message("")

    def _draw_panel(self) -> None:
        self._panel_stale = False
        trace = self.controller.step_trace
        if trace is None:
            self._panel.show_message(self.controller.error or "Type a sentence to see its steps.")
        else:
            self._panel.show_step(trace, self.controller.step, self.controller.head, self.controller.colormap,
                                  *self._steps_note())
        self._show_focus()
        # The tables' new size lays the panel and the scroll area out again and changes the scroll bars'
        # ranges, on which Qt lays the bars out on a queued call of the scroll area's. Both ran after the
        # window was painted (a plot's scene paints it from its own queued call) and painted the dock again
        # on a pass of their own (a head changed: 1.5 ms more): they run now, painted with the rest. Only
        # this dock's: the views that hear of the change after it have not drawn it yet.
        self._panel.lay_out_now()
        QtCore.QCoreApplication.sendPostedEvents(self.scroll.viewport(), QtCore.QEvent.Type.LayoutRequest)
        QtCore.QCoreApplication.sendPostedEvents(self.scroll, QtCore.QEvent.Type.MetaCall)

    def _steps_note(self) -> tuple[str, bool]:
        """(note, whether it stands out) for a real model's layer: which layer and head the steps show;
        and when the other views show a reading of it (words, hidden tokens, rollout), that the steps are
        the layer's own computation, standing out. Always there for a real model, so that a reading
        switched on or off changes a line of text and moves no table (a toy model's steps have none)."""
        trace, step = self.controller.trace, self.controller.step_trace
        if trace is not None and trace.reading is not None:
            return trace.reading.steps_note(self.controller.head), True
        if step is not None and step.layer is not None:
            return layer_steps_note(step, self.controller.head), False
        return "", False

    # --- the focus in the tables ----------------------------------------------------------------
    def _tables(self) -> list[MatrixTable]:
        return [*self.panel.inputs().values(), *self.panel.results().values()]

    def _show_focus(self, *_):
        """Frame the focused word in every table that has a row or column per word: in the n × n
        tables (scores, weights) its row when it is the word looking, its column when looked at; in
        the others its row (or, in Kᵀ, its column)."""
        if self._panel_stale:
            return  # drawn with the tables
        trace = self.controller.step_trace
        focus, span = self._focus_in_steps()
        looked_at = self.controller.focus_role == LOOKED_AT
        # cross-attention's words looked at are another text's: the focused word is framed only where
        # its own text's words are (the source's in H, K, V and the columns of the scores and weights)
        words = tuple(trace.labels_of(looked_at)) if trace else ()
        for table in self._tables():
            self._wire_hover(table)
            shown = table.matrix_model.table
            if focus is None or shown is None:
                table.set_focus(None, None)
                continue
            word_rows, word_cols = tuple(shown.rows) == words, tuple(shown.cols) == words
            by_column = word_cols and (looked_at or not word_rows)
            by_row = word_rows and not by_column
            table.set_focus(focus if by_row else None, focus if by_column else None, span)

    def _focus_in_steps(self) -> tuple[int | None, int]:
        """The focused word as the steps' tokens number it, and how many of them it stands for (a word
        shown merged is its pieces, which follow one another)."""
        trace, focus = self.controller.trace, self.controller.focus
        if focus is None or trace is None or trace.reading is None:
            return focus, 1
        group = trace.reading.group(focus, looked_at=self.controller.focus_role == LOOKED_AT)
        return min(group), max(group) - min(group) + 1

    def _wire_hover(self, table: MatrixTable) -> None:
        if not table.property("sets_focus"):
            table.setProperty("sets_focus", True)
            table.row_hovered.connect(lambda row, t=table: self._on_table_row_hovered(t, row))

    def _on_table_row_hovered(self, table: MatrixTable, row: int | None) -> None:
        """A row of a table whose rows are the words focuses that word, as the one looking (a row of
        cross-attention's source, as the one looked at)."""
        trace, shown = self.controller.step_trace, table.matrix_model.table
        if row is not None and trace is not None and shown is not None and trace.key_tokens is not None \
                and tuple(shown.rows) == tuple(trace.looked_at_labels):  # H, K or V of cross-attention's source
            self.controller.set_hovered(row, LOOKED_AT, table)
            return
        if row is None or trace is None or shown is None or tuple(shown.rows) != tuple(trace.labels):
            self.controller.set_hovered(None, source=table)
            return
        reading = self.controller.trace.reading
        shown_row = row if reading is None else reading.shown_index(row)  # None: a token the reading hides
        self.controller.set_hovered(shown_row, LOOKING, table)

    def showEvent(self, event: QtGui.QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self._stale:
            self._show_step()

    def _style_strip(self) -> None:
        """The current step stands out; a skipped one is greyed and struck through, never hidden."""
        trace = self.controller.step_trace
        css = (f"QToolButton {{ padding: 3px; }}"
               f"QToolButton:checked {{ background: {theme.highlight().name()}; color: white; font-weight: bold; }}"
               f"QToolButton[skipped=\"true\"] {{ color: {theme.muted().name(QtGui.QColor.NameFormat.HexArgb)}; }}")
        if css != self.strip_widget.styleSheet():  # changes only with the light/dark scheme
            self.strip_widget.setStyleSheet(css)
        for i, step in enumerate(STEPS):
            button = self.strip.button(i)
            reason = skip_reason(trace, step.key) if trace is not None else ""
            title = step.title_for(trace)  # the mask's says which mask this layer has
            tip = f"{title}\n{reason}" if reason else title
            if button.toolTip() != tip:
                button.setToolTip(tip)
            if button.property("skipped") == bool(reason):
                continue  # restyling costs more than the check: most edits change no step's state
            font = button.font()
            font.setStrikeOut(bool(reason))
            button.setFont(font)
            button.setProperty("skipped", bool(reason))
            button.style().unpolish(button)
            button.style().polish(button)

    # --- keys -----------------------------------------------------------------------------------
    def _on_focus_changed(self, _old, new) -> None:
        for key, shortcut in self.shortcuts.items():
            shortcut.setEnabled(not widget_needs_key(new, key))

    # --- export ---------------------------------------------------------------------------------
    def export_widget(self) -> QtWidgets.QWidget:
        return self.panel.export_widget()

    def set_export_background(self, color: QtGui.QColor | None) -> None:
        self.panel.set_export_background(color)

    def animation_frame_limit(self) -> int:
        """The most frames animation_frames() yields (a step with few cells has fewer): a GIF's progress total."""
        return len(STEPS) * (GIF_PARTIAL_FRAMES + 1)

    def animation_frames(self) -> Iterator[tuple[QtMatrixPanel, int]]:
        """The whole play-through for a GIF: (panel, milliseconds) per frame, a few frames of each step
        filling in and then the step finished. Drawn on a second, offscreen panel: the window stays as it is."""
        trace = self.controller.step_trace
        if trace is None:
            return
        panel = QtMatrixPanel()
        panel.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
        panel.show()
        try:
            for step in range(len(STEPS)):
                panel.show_step(trace, step, self.controller.head, self.controller.colormap, *self._steps_note())
                units = panel.unit_count()
                partial = sorted({units * k // (GIF_PARTIAL_FRAMES + 1) for k in range(1, GIF_PARTIAL_FRAMES + 1)})
                for filled in (f for f in partial if 0 < f < units):
                    panel.set_filled(filled)
                    yield panel, GIF_PARTIAL_MS
                panel.set_filled(units)
                yield panel, GIF_HOLD_MS
        finally:
            panel.close()
            panel.deleteLater()
