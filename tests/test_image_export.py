"""The image half of exporting: the steps GIF drawn frame by frame with progress and cancel, and the
target checked before any frame is drawn."""

import pytest
from PIL import Image
from PySide6 import QtWidgets

from attention_explorer import engine
from attention_explorer.export import ExportCancelled, ExportError
from attention_explorer.headless import offscreen_view
from attention_explorer.image_export import export_gif, render_image


@pytest.fixture
def steps_view(qapp):
    model = engine.load_builtin("cats-chase-mice")
    with offscreen_view(model, model.default_sentence, model.default_options, view="steps", matrix="weights",
                        head=0) as view:
        yield view


def test_progress_counts_every_frame_and_ends_at_the_total(steps_view, tmp_path):
    calls = []
    target = tmp_path / "steps.gif"
    export_gif(steps_view, target, progress=lambda done, total: calls.append((done, total)) or True)
    with Image.open(target) as gif:
        drawn = len(calls) - 1  # the last call reports the finished file
        assert gif.format == "GIF" and 0 < gif.n_frames <= drawn
    assert [done for done, _ in calls[:-1]] == list(range(1, drawn + 1))
    total = steps_view.animation_frame_limit()
    assert calls[-1] == (total, total) and all(done <= t == total for done, t in calls)


def test_cancelling_writes_nothing_and_keeps_the_old_file(steps_view, tmp_path):
    target = tmp_path / "steps.gif"
    target.write_bytes(b"old")
    calls = []
    with pytest.raises(ExportCancelled, match="nothing was written"):
        export_gif(steps_view, target, progress=lambda done, total: calls.append(done) or done < 3)
    assert calls == [1, 2, 3]
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["steps.gif"]


def test_a_bad_target_fails_before_any_frame_is_drawn(steps_view, tmp_path, monkeypatch):
    def no_frames():
        raise AssertionError("frames drawn although the folder does not exist")

    monkeypatch.setattr(steps_view, "animation_frames", no_frames)
    with pytest.raises(ExportError, match="there is no folder"):
        export_gif(steps_view, tmp_path / "missing" / "steps.gif")


def test_frames_of_different_sizes_share_one_canvas_on_the_background(steps_view, tmp_path):
    target = tmp_path / "steps.gif"
    export_gif(steps_view, target)
    sizes = set()
    with Image.open(target) as gif:
        for index in range(gif.n_frames):
            gif.seek(index)
            sizes.add(gif.size)
        corner = gif.convert("RGB").getpixel((gif.size[0] - 1, gif.size[1] - 1))
    assert len(sizes) == 1
    from attention_explorer.views import theme

    background = theme.background()
    assert sum(abs(a - b) for a, b in zip(corner, (background.red(), background.green(), background.blue()),
                                           strict=True)) < 24


def test_an_image_too_large_to_write_is_refused_before_it_is_drawn(qtbot):
    """A real model's 384-column step tables would make a 21,000-pixel-wide image (over 600 MB)."""
    class HugeView:
        def __init__(self):
            self.widget = QtWidgets.QWidget()
            self.widget.resize(21_000, 8_000)

        def export_widget(self):
            return self.widget

        def set_export_background(self, _color):
            pass

    view = HugeView()
    qtbot.addWidget(view.widget)
    with pytest.raises(ExportError, match=r"21,000 × 8,000 pixels, too large"):
        render_image(view)
