"""The arc diagram on its own: which lines it draws, how a focused word's lines stand out, labels that
never overlap at any length, and a mouse resting on a word that costs no redraw."""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PySide6 import QtCore, QtWidgets

from attention_explorer import engine
from attention_explorer.cli import main
from attention_explorer.controller import LOOKED_AT, LOOKING, Controller
from attention_explorer.image_export import export_svg, svg_bytes
from attention_explorer.svg_fixes import SVG_NS
from attention_explorer.views import theme
from attention_explorer.views.arc_diagram import (
    ALL_HEADS_PX_PER_HEAD,
    ALL_HEADS_TIP,
    DIMMED_OPACITY,
    LEFT,
    ONE_HEAD_NOTE,
    ONE_HEAD_TIP,
    RIGHT,
    QtArcDiagram,
)
from attention_explorer.views.arc_lines import LAYERED_WIDTH_PX, ROW_BLOCK, selected_arcs, strongest_first
from gui_helpers import hover_arc_end
from screen_oracle import check_backing_store
from view_twins import check_twin


def sentence_of(n: int, model: engine.ToyModel) -> str:
    words = sorted(model.vocabulary)
    return " ".join(words[(7 * i) % len(words)] for i in range(n))


def shown_arcs(qtbot, controller: Controller, size=(520, 720)) -> QtArcDiagram:
    arcs = QtArcDiagram(controller)
    qtbot.addWidget(arcs)
    arcs.resize(*size)
    arcs.show()
    qtbot.waitExposed(arcs)
    QtWidgets.QApplication.processEvents()
    return arcs


@pytest.fixture
def make_arcs(qtbot):
    def make(n: int | None = None, size=(520, 720)) -> QtArcDiagram:
        model = engine.load_builtin("cat-sat-on-mat")
        return shown_arcs(qtbot, Controller(model, None if n is None else sentence_of(n, model)), size)
    return make


class PaintCounter(QtCore.QObject):
    def __init__(self, widget):
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, _watched, event):  # noqa: N802 - Qt API
        self.count += event.type() == QtCore.QEvent.Type.Paint
        return False


def test_each_word_keeps_its_strongest_visible_lines():
    weights = np.array([[0.5, 0.3, 0.2],
                        [0.001, 0.009, 0.99],
                        [0.2, 0.2, 0.6]])
    rows, cols, shown = selected_arcs(weights, strongest_first(weights, keep=2))
    # row 1's second strongest (0.009) is kept, its faintest (0.001 < 0.5 %) would not be; ties keep column order
    assert list(zip(rows.tolist(), cols.tolist(), shown.tolist(), strict=True)) == [
        (0, 0, 0.5), (0, 1, 0.3), (1, 2, 0.99), (1, 1, 0.009), (2, 2, 0.6), (2, 0, 0.2)]
    rows, _, _ = selected_arcs(weights, strongest_first(weights, keep=0))
    assert len(rows) == 8  # every line but the one under 0.5 %


@pytest.mark.parametrize("rows", [1, 30, ROW_BLOCK + 7, 3 * ROW_BLOCK])
@pytest.mark.parametrize("keep", [1, 3, 8, 9, 0])
def test_the_strongest_per_row_are_those_a_stable_sort_puts_first(keep, rows):
    rng = np.random.default_rng(keep)
    weights = rng.random((rows, 12)).round(1)  # rounded: many equal weights in a row
    weights[:, 5] = weights[:, 2]              # and a repeated word
    weights.flags.writeable = False            # a trace's weights are read-only: never written through
    np.testing.assert_array_equal(strongest_first(weights, keep),
                                  np.argsort(-weights, axis=1, kind="stable")[:, :keep or 12])


def test_left_end_shows_where_a_word_looks_and_right_end_who_looks_at_it(make_arcs):
    arcs = make_arcs()
    controller = arcs.controller
    hover_arc_end(arcs, LEFT, 1)
    assert (controller.focus, controller.focus_role) == (1, LOOKING)
    assert {i for _, i, _, _ in arcs.drawn_arcs()} == {1}
    hover_arc_end(arcs, RIGHT, 4)
    assert (controller.focus, controller.focus_role) == (4, LOOKED_AT)
    assert {j for _, _, j, _ in arcs.drawn_arcs()} == {4}
    weights = controller.trace.heads[0].weights
    assert {(i, w) for h, i, _, w in arcs.drawn_arcs() if h == 0} == {
        (i, weights[i, 4]) for i in range(controller.trace.n) if weights[i, 4] >= 0.005}


def test_a_focused_word_is_drawn_strongly_over_the_dimmed_rest(make_arcs):
    arcs = make_arcs()
    every_line = len(arcs.drawn_arcs())
    assert arcs.lines.opacity() == 1.0 and not arcs.focus_lines.batches()
    arcs.controller.set_hovered(2)
    assert arcs.lines.opacity() == DIMMED_OPACITY
    assert sum(len(pairs) for _, pairs in arcs.lines.batches()) == every_line  # the rest stays, dimmed
    strong = {(int(i), int(j)) for _, pairs in arcs.focus_lines.batches() for i, j in pairs}
    assert strong == {(i, j) for _, i, j, _ in arcs.drawn_arcs()} and {i for i, _ in strong} == {2}
    arcs.controller.set_hovered(None)
    assert arcs.lines.opacity() == 1.0 and not arcs.focus_lines.batches()


def test_a_mouse_resting_on_a_word_redraws_nothing(qtbot, make_arcs):
    arcs = make_arcs()
    point = hover_arc_end(arcs, LEFT, 3)
    counter = PaintCounter(arcs.graphics.viewport())
    for k in range(8):
        qtbot.wait(15)  # pyqtgraph drops moves closer than 10 ms apart
        qtbot.mouseMove(arcs.graphics.viewport(), point + QtCore.QPoint(k % 2, 0))
    qtbot.wait(30)
    assert arcs.controller.hovered == 3
    assert counter.count == 0


def test_another_head_redraws_nothing_while_every_head_is_shown_and_its_own_lines_when_one_is(qtbot, make_arcs):
    arcs = make_arcs()
    assert arcs.all_heads.isChecked() and len(arcs.heads_shown()) > 1
    drawn = arcs.drawn_arcs()
    counter = PaintCounter(arcs.graphics.viewport())
    arcs.controller.set_head(1)
    qtbot.wait(30)
    assert counter.count == 0 and arcs.drawn_arcs() == drawn  # the same lines, in the same colours

    arcs.all_heads.click()
    assert {head for head, *_ in arcs.drawn_arcs()} == {1}
    arcs.controller.set_head(0)
    qtbot.waitUntil(lambda: counter.count > 0)
    assert {head for head, *_ in arcs.drawn_arcs()} == {0}


@pytest.mark.parametrize("words", [9, 6])
def test_a_sentence_of_another_length_is_painted_once(qtbot, make_arcs, words):
    """The rows' range was set for the next paint to apply: the lines' and words' bounds changed during
    that paint, and the scene was painted a second time (each of a generation's steps, at a cost)."""
    arcs = make_arcs(7)
    arcs.controller.set_pinned(2)
    QtWidgets.QApplication.processEvents()
    counter = PaintCounter(arcs.graphics.viewport())
    arcs.controller.set_sentence(sentence_of(words, arcs.controller.model))
    for _ in range(4):
        QtWidgets.QApplication.processEvents()
    assert counter.count == 1
    check_backing_store(arcs, f"{words} words")


def test_a_new_sentence_that_drops_the_focused_word_finds_the_focus_lines_once(qtbot, make_arcs, monkeypatch):
    """The new trace's lines are drawn with the focus as it now is; the focus change announced after
    the trace found the same lines again and drew their picture a second time."""
    arcs = make_arcs(9)
    arcs.controller.set_pinned(8)
    QtWidgets.QApplication.processEvents()
    calls = []
    original = arcs.focus_lines.set_batches
    monkeypatch.setattr(arcs.focus_lines, "set_batches", lambda *a: calls.append(a) or original(*a))
    focus = []
    arcs.controller.focus_changed.connect(focus.append)
    arcs.controller.set_sentence(sentence_of(6, arcs.controller.model))
    assert focus == [None] and len(calls) == 1 and arcs.focus_lines.batches() == []
    arcs.controller.set_pinned(3)
    assert len(calls) == 2 and arcs.focus_lines.batches()
    QtWidgets.QApplication.processEvents()
    check_twin(arcs, "a focused word dropped, another pinned")


def _assert_labels_apart(arcs):
    for side in (LEFT, RIGHT):
        drawn = arcs.drawn_labels(side)
        for a, (i, rect) in enumerate(drawn):
            for j, other in drawn[a + 1:]:
                assert not rect.intersects(other), f"labels of words {i} and {j} overlap on the {side}"


@pytest.mark.parametrize("n", [40, 200])
def test_labels_never_overlap_and_the_focused_word_is_always_drawn(make_arcs, n):
    arcs = make_arcs(n)
    _assert_labels_apart(arcs)
    assert len(arcs.drawn_labels(LEFT)) >= min(n, 20)  # thinned, not emptied
    for focus in (0, 1, n // 2 + 1, n - 1):
        arcs.controller.set_hovered(focus, LOOKED_AT)
        _assert_labels_apart(arcs)
        for side in (LEFT, RIGHT):
            label = arcs.label(side, focus)
            assert label is not None and label.bold and label.color == theme.highlight()
            assert label.text == arcs.controller.trace.labels[focus]  # in full, even where others are shortened


def test_a_word_whose_label_was_thinned_out_can_still_be_hovered_and_shows_in_full(qtbot, make_arcs):
    arcs = make_arcs(200)
    drawn = [rect for _i, rect in arcs.drawn_labels(RIGHT)]

    def off_the_words(i: int) -> QtCore.QPointF:  # past the line's end on the word's row, on no drawn word
        return arcs.view.mapViewToScene(QtCore.QPointF(1.0, i)) + QtCore.QPointF(4, 0)

    hidden = next(i for i in range(200) if arcs.label(RIGHT, i) is None
                  and not any(rect.contains(off_the_words(i)) for rect in drawn))
    scene_point = off_the_words(hidden)
    qtbot.mouseMove(arcs.graphics.viewport(), arcs.graphics.mapFromScene(scene_point))
    qtbot.wait(30)
    assert (arcs.controller.focus, arcs.controller.focus_role) == (hidden, LOOKED_AT)
    assert arcs.label(RIGHT, hidden).text == arcs.controller.trace.labels[hidden]
    _assert_labels_apart(arcs)


def test_a_long_sentence_exports_to_svg_with_no_overlapping_words(make_arcs):
    arcs = make_arcs(200, size=(520, 700))
    arcs.controller.set_pinned(57)
    _assert_svg_words_apart(svg_bytes(arcs), arcs.controller.trace.labels, must_show=57)


def test_the_command_line_exports_a_long_sentences_arcs_with_no_overlapping_words(tmp_path):
    model = engine.load_builtin("cat-sat-on-mat")
    target = tmp_path / "arcs.svg"
    assert main(["export", "--view", "arcs", "--sentence", sentence_of(200, model), "-o", str(target)]) == 0
    labels = engine.run(model, sentence_of(200, model)).labels
    _assert_svg_words_apart(target.read_bytes(), labels)


def _assert_svg_words_apart(svg: bytes, labels: list[str], must_show: int | None = None) -> None:
    """Word labels of each side of an exported SVG sit at least a line apart."""
    root = ET.fromstring(svg)
    texts = [(float(t.get("x", 0)), float(t.get("y", 0)), float(t.get("font-size") or _inherited_size(root, t)),
              "".join(t.itertext()).strip()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    words = [t for t in texts if t[3] in set(labels)]  # not the legend
    assert len(words) > 40
    if must_show is not None:
        assert labels[must_show] in {t[3] for t in words}
    middle = float(root.get("viewBox").split()[2]) / 2
    for left_side in (True, False):
        column = sorted((y, size) for x, y, size, _ in words if (x < middle) == left_side)
        assert len(column) > 20
        for (y0, size), (y1, _) in zip(column, column[1:], strict=False):
            assert y1 - y0 >= size, f"two words overlap in the exported SVG at y = {y0:.0f}, {y1:.0f}"


def _inherited_size(root, text) -> float:
    parents = {child: parent for parent in root.iter() for child in parent}
    node = text
    while node is not None:
        if node.get("font-size"):
            return float(re.sub("[a-z]+$", "", node.get("font-size")))
        node = parents.get(node)
    raise AssertionError("an SVG text without a font size")


def test_a_narrowed_pane_keeps_the_legend_and_the_right_hand_words_in_sight(qtbot):
    """Eight heads' legend in a pane narrowed after it was drawn (a dock opening beside it): the
    legend wraps and the plot shrinks back to the pane, so no right-hand word is cut off."""
    model = engine.load_builtin("cat-sat-on-mat")
    arcs = shown_arcs(qtbot, Controller(model, "the cat sat on the mat", engine.Options(heads=8)), (700, 600))
    arcs.resize(250, 600)
    QtWidgets.QApplication.processEvents()
    qtbot.wait(1)  # the plot is refitted once the layout has settled
    visible = arcs.graphics.viewport().width()
    assert arcs.graphics.centralWidget.geometry().width() <= visible
    rights = [rect.right() for _, rect in arcs.drawn_labels(RIGHT)]
    assert rights and max(rights) <= visible, f"a right-hand word reaches {max(rights):.0f} px of {visible}"
    lefts = [rect.left() for _, rect in arcs.drawn_labels(LEFT)]
    assert lefts and min(lefts) >= 0, f"a left-hand word starts at {min(lefts):.0f} px"


def test_the_longest_words_fit_beside_the_lines_in_a_narrow_pane(qtbot):
    source = engine.model_to_dict(engine.load_builtin("cat-sat-on-mat"))
    source["vocabulary"]["interminably"] = source["vocabulary"]["sat"]  # a word as wide as the room allows
    arcs = shown_arcs(qtbot, Controller(engine.model_from_dict(source), "the cat sat interminably on the mat"),
                      (230, 600))
    visible = arcs.graphics.viewport().width()
    for side in (LEFT, RIGHT):
        rects = [rect for _, rect in arcs.drawn_labels(side)]
        assert min(r.left() for r in rects) >= 0 and max(r.right() for r in rects) <= visible, side


def test_a_pane_too_short_for_every_heads_arcs_draws_the_selected_head_and_the_box_says_why(qtbot, make_arcs):
    """Every head's lines need ALL_HEADS_PX_PER_HEAD of the pane's height a head for each word; below that
    they cannot be told apart, and the arcs draw the selected head. Resizing past the limit redraws."""
    arcs = make_arcs(60, size=(520, 720))
    arcs.controller.set_options(arcs.controller.options.with_changes(heads=8))  # 2.7 px a word needed
    qtbot.waitUntil(lambda: arcs.heads_shown() == list(range(8)))
    assert arcs.graphics.height() / 60 >= 8 * ALL_HEADS_PX_PER_HEAD
    assert {head for head, *_ in arcs.drawn_arcs()} == set(range(8)) and ONE_HEAD_NOTE not in arcs.legend.text
    arcs.resize(520, 150)  # under 2.7 px a word
    qtbot.waitUntil(lambda: arcs.heads_shown() == [0])
    assert arcs.graphics.height() / 60 < 8 * ALL_HEADS_PX_PER_HEAD
    assert arcs.all_heads.toolTip() == ONE_HEAD_TIP and ONE_HEAD_NOTE in arcs.legend.text
    assert {head for head, *_ in arcs.drawn_arcs()} == {0}
    assert arcs.all_heads.isChecked() and arcs.all_heads.isEnabled()  # the choice stays the user's
    arcs.all_heads.click()  # one head asked for: drawn, and no note (it draws what was asked)
    assert {head for head, *_ in arcs.drawn_arcs()} == {0} and ONE_HEAD_NOTE not in arcs.legend.text
    arcs.all_heads.click()
    assert ONE_HEAD_NOTE in arcs.legend.text
    arcs.controller.set_head(1)
    qtbot.waitUntil(lambda: {head for head, *_ in arcs.drawn_arcs()} == {1})
    arcs.resize(520, 720)
    qtbot.waitUntil(lambda: arcs.heads_shown() == list(range(8)))
    assert arcs.all_heads.toolTip() == ALL_HEADS_TIP and ONE_HEAD_NOTE not in arcs.legend.text
    assert {head for head, *_ in arcs.drawn_arcs()} == set(range(8))
    check_twin(arcs, "a pane made short and tall again")


def test_an_svg_of_the_arcs_draws_each_bucket_s_wide_lines_as_one_translucent_group_as_the_picture_does(
        qtbot, make_arcs, tmp_path):
    """On screen and in a PNG each bucket's wide lines, every head's, are drawn opaque into a layer laid
    over the picture at the bucket's opacity, so lines of a bucket that cross show once. The SVG drew
    each line translucent, and the crossings came out darker in every viewer. It now holds one group a
    bucket at the bucket's opacity, its lines (of several heads) opaque; thin lines keep their pens."""
    arcs = make_arcs(20)
    arcs.controller.set_options(arcs.controller.options.with_changes(heads=8))
    qtbot.waitUntil(lambda: arcs.heads_shown() == list(range(8)))
    layered = {pen.color().alpha() for pen, _ in arcs.lines.batches() if pen.widthF() >= LAYERED_WIDTH_PX}
    export_svg(arcs, tmp_path / "arcs.svg")
    root = ET.parse(tmp_path / "arcs.svg").getroot()
    groups = [group for group in root.iter(f"{{{SVG_NS}}}g") if group.get("opacity") is not None]
    assert len(layered) > 2 and sorted(round(float(g.get("opacity")) * 255) for g in groups) == sorted(layered)
    pens = [group.findall(f"{{{SVG_NS}}}g") or [group] for group in groups]  # a bucket of one head: its own
    assert {pen.get("stroke-opacity") for bucket in pens for pen in bucket} == {"1"}
    assert max(len({pen.get("stroke") for pen in bucket}) for bucket in pens) > 1  # one group, many heads
    thin = [g for g in root.iter(f"{{{SVG_NS}}}g") if g.get("stroke-width") == "0.95"]
    assert thin and all(float(g.get("stroke-opacity")) < 1 for g in thin)


def test_a_figure_of_arcs_too_short_for_every_head_says_in_its_caption_that_it_draws_one(tmp_path):
    """`--width-cm` lays a figure out at a print width, so a long text gets fewer pixels a word: the caption
    names the head drawn, not "all heads"."""
    model = engine.load_builtin("cat-sat-on-mat")
    sentence = sentence_of(300, model)
    out = tmp_path / "arcs.svg"
    assert main(["export", "--sentence", sentence, "--heads", "8", "--view", "arcs", "--width-cm", "8",
                 "-o", str(out)]) == 0
    text = out.read_text()
    assert "head 1 of 8 (too many words at this height to tell every head" in text
    assert "all 8 heads" not in text
    out = tmp_path / "few.svg"
    assert main(["export", "--sentence", sentence_of(20, model), "--heads", "8", "--view", "arcs",
                 "-o", str(out)]) == 0
    assert "all 8 heads, one colour each" in out.read_text()


def test_every_head_is_drawn_from_one_pane_height_on_and_the_choice_settles_at_every_height(qtbot, make_arcs):
    """The choice depends on the pane, not on the lines' own height: the legend of every head takes more
    rows than one head's, and a choice made on the lines' height flipped at each redraw near the limit."""
    arcs = make_arcs(60, size=(520, 720))
    arcs.controller.set_options(arcs.controller.options.with_changes(heads=8))
    qtbot.waitUntil(lambda: arcs.heads_shown() == list(range(8)))
    every = []
    for height in range(120, 330, 4):
        arcs.resize(520, height)
        for _ in range(3):
            QtWidgets.QApplication.processEvents()
        shown = arcs.heads_shown()
        drawn = {head for head, *_ in arcs.drawn_arcs()}
        for _ in range(3):
            QtWidgets.QApplication.processEvents()
        assert arcs.heads_shown() == shown and {head for head, *_ in arcs.drawn_arcs()} == drawn == set(shown), height
        every.append(len(shown) == 8)
    assert not every[0] and every[-1] and every == sorted(every)  # one head, then every head from one height on


@pytest.mark.parametrize("words", [5, 60, 200])
def test_the_first_and_last_words_labels_lie_whole_inside_the_view_however_thin_the_rows(make_arcs, words):
    """A label is centred on its row: with rows thinner than a label (200 words in 300 px), the room
    above the first row and below the last grows to half a label, or the first word was cut in half."""
    arcs = make_arcs(words, size=(520, 300))
    view = arcs.view.sceneBoundingRect()
    for side in (LEFT, RIGHT):
        rows = sorted(arcs.drawn_labels(side), key=lambda label: label[0])
        assert rows[0][0] == 0
        for _index, rect in (rows[0], rows[-1]):
            assert view.top() <= rect.top() and rect.bottom() <= view.bottom(), (side, rect, view)
