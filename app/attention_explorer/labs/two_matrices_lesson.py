"""Lesson: why separate W_Q and W_K? Tie them and attention can no longer be one-sided.

engine.compare_tied runs the sentence with the model as it is and with W_K replaced by W_Q; the
panel shows both score matrices and follows the pair of words that was most one-sided before.
"""

from __future__ import annotations

from PySide6 import QtWidgets

from .. import engine
from ..controller import Controller
from ..engine import TiedComparison
from ..views.matrix_plot import MatrixPlot
from .lesson_panel import LessonPanel

AXIS_TITLES = ("word looking (query)", "word looked at (key)")


class QtTwoMatricesLesson(LessonPanel):
    explanation = (
        "Each word is turned into a query (what it looks for) with W_Q and into a key (what it offers) with W_K. "
        "Because the two differ, “sat” can look hard at “cat” while “cat” hardly looks back. Make W_K the same "
        "as W_Q and every key equals its query: the score of i looking at j becomes the score of j looking "
        "at i, so the score matrix turns symmetric and no pull can go one way only.")

    def __init__(self, controller: Controller, parent: QtWidgets.QWidget | None = None):
        super().__init__(controller, parent)
        self.comparison: TiedComparison | None = None
        self.tie_switch = QtWidgets.QCheckBox("Tie W_K to W_Q (keys = queries)")
        self.tie_switch.setToolTip("Replace W_K by a copy of W_Q in this lesson; the model itself is not changed")
        self.body.addWidget(self.tie_switch)
        maps = QtWidgets.QHBoxLayout()
        self.before_map, self.after_map = MatrixPlot(), MatrixPlot()
        maps.addWidget(self.before_map)
        maps.addWidget(self.after_map)
        self.body.addLayout(maps, 1)
        self.pair_line = self.finding()
        self.symmetry_line = self.finding()
        self.body.addWidget(self.pair_line)
        self.body.addWidget(self.symmetry_line)
        self.body.addWidget(self.note(
            "The weights of a pair can still differ a little after tying: softmax shares out each row on its "
            "own, and two rows have different totals. Tied, words also tend to look at themselves, since q·q "
            "is large — one more reason the Transformer learns W_Q and W_K separately."))
        self.tie_switch.toggled.connect(self.request_refresh)

    def shown_after(self):
        """The score matrix on the right, or None while the switch is off."""
        return self.after_map.shown_matrix() if self.tie_switch.isChecked() else None

    def refresh(self) -> None:
        c = self.controller
        self.current_trace()
        h = self.current_head()
        self.comparison = result = engine.compare_tied(c.model, c.sentence, c.options, head=h)
        before, after = result.untied.heads[h], result.tied.heads[h]
        labels = result.untied.labels
        self.before_map.show_matrix(before.scores, labels, labels, colormap=c.colormap, axis_titles=AXIS_TITLES,
                                    title="scores QKᵀ, separate W_Q and W_K (before)")
        tied = self.tie_switch.isChecked()
        if tied:
            self.after_map.show_matrix(after.scores, labels, labels, colormap=c.colormap, axis_titles=AXIS_TITLES,
                                       title="scores QQᵀ with W_K = W_Q (after): symmetric")
        else:
            self.after_map.show_message("Switch on “Tie W_K to W_Q” above to see the scores when every key "
                                        "equals its query.")
        pair = result.pair
        if pair is None:
            self.pair_line.setText("A single word has no pair to compare: type a longer sentence.")
            self.symmetry_line.setText("")
            return
        cells = [(pair.looker, pair.looked_at), (pair.looked_at, pair.looker)]
        self.before_map.set_outlined(cells)
        if tied:
            self.after_map.set_outlined(cells)
        self.pair_line.setText(self._pair_text(result, labels, tied))
        self.symmetry_line.setText(
            f"Largest gap between a score and its mirror image |S − Sᵀ|: {result.score_asymmetry_before:.3g} "
            f"before" + (f", {result.score_asymmetry_after:.3g} after tying." if tied else "."))

    @staticmethod
    def _pair_text(result: TiedComparison, labels: list[str], tied: bool) -> str:
        pair, h = result.pair, result.head
        i, j = labels[pair.looker], labels[pair.looked_at]
        before = result.untied.heads[h]
        fwd_score, back_score = pair.in_matrix(before.scores)
        text = (f"Most one-sided pair before: “{i}” → “{j}” gets {pair.forward:.0%} of {i}'s attention "
                f"(score {fwd_score:.2f}), but “{j}” → “{i}” only {pair.backward:.0%} (score {back_score:.2f}).")
        if tied:
            after = result.tied.heads[h]
            fwd_score, back_score = pair.in_matrix(after.scores)
            fwd_w, back_w = pair.in_matrix(after.weights)
            text += (f" After tying the two scores are equal ({fwd_score:.2f} and {back_score:.2f}), so the pair is "
                     f"no longer one-sided: after softmax “{i}” gives “{j}” {_share(fwd_w)} of its attention and "
                     f"“{j}” gives “{i}” {_share(back_w)}.")
            if max(fwd_w, back_w) < 0.05:
                text += " Both are small because, tied, each word looks mostly at itself (q·q is large)."
        return text


def _share(weight: float) -> str:
    """A weight as a share of attention that never reads as a misleading "0.0%"."""
    return "under 0.1%" if weight < 0.001 else f"{weight:.1%}"
