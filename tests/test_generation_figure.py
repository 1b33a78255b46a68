"""A generation drawn (generation_figure) on the tiny committed decoders: the PNG's cells are the
colours of the steps' weights, the upper right (tokens not yet written) hatched, the prompt's end
marked; the SVG keeps its words as text, the written ones in their own colour; the GIF plays a frame
per step and holds the last; each file says how to make it again."""

import gc
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
import shiboken6
from PySide6 import QtCore, QtGui, QtWidgets

pytest.importorskip("tokenizers")
from attention_explorer.engine.pretrained import open_pretrained  # noqa: E402
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate  # noqa: E402
from attention_explorer.engine.pretrained.sampling import Sampling  # noqa: E402
from attention_explorer.engine.tokenizer import token_labels  # noqa: E402
from attention_explorer.export import ExportError  # noqa: E402
from attention_explorer.figure_metadata import png_chunks, png_metadata  # noqa: E402
from attention_explorer.generation_figure import (  # noqa: E402
    GENERATION_KEYWORD,
    GIF_LAST_MS,
    GIF_STEP_MS,
    MAX_GIF_FRAMES,
    WRITTEN_COLOUR,
    built_generation_figure,
    check_size,
    generate_command,
    generation_table,
    gif_durations,
    gif_frames,
    percent_text,
    row_label,
    write_generation_figure,
)
from attention_explorer.svg_fixes import SVG_NS, read_metadata  # noqa: E402

DATA = Path(__file__).parent / "engine" / "pretrained" / "data"
LLAMA, GPT2 = DATA / "tiny-llama.gguf", DATA / "tiny-gpt2"
PROMPT = "the cat sat on the mat"
STEPS = 6
WHITE = (255, 255, 255)


@pytest.fixture(scope="module")
def llama():
    model = open_pretrained(LLAMA)
    return model, generate(model, PROMPT, GenerationSettings(STEPS))


def _rgb(image: QtGui.QImage, point: QtCore.QPointF, scale: int = 1) -> tuple[int, int, int]:
    colour = image.pixelColor(int(point.x() * scale), int(point.y() * scale))
    return colour.red(), colour.green(), colour.blue()


def _close(a, b, slack: int = 6) -> bool:
    return all(abs(x - y) <= slack for x, y in zip(a, b, strict=True))


def _blank(colour) -> bool:
    """The background (in a GIF, its palette's nearest colour)."""
    return _close(colour, WHITE, 3)


def _viridis(value: float) -> tuple[int, int, int]:
    return tuple(int(c) for c in pg.colormap.get("viridis").map([value], mode="byte")[0][:3])


# --- the numbers -------------------------------------------------------------------------------------

def test_the_table_is_each_steps_row_then_masked_cells(llama):
    model, generation = llama
    table = generation_table(model, generation, 1, 2)
    prompt = len(generation.prompt_ids)
    assert table.shape == (STEPS, prompt + STEPS - 1) and table.prompt_length == prompt
    for index, step in enumerate(generation.steps):
        np.testing.assert_array_equal(table.weights[index, :prompt + index], step.attention[1, 2])
        assert not table.mask[index, :prompt + index].any() and table.mask[index, prompt + index:].all()
    labels = token_labels([model.tokenizer.token_label(int(i)) for i in generation.ids])  # repeats told apart
    assert table.column_labels == labels[:prompt + STEPS - 1] and table.written_labels == labels[prompt:]
    assert table.column_labels[prompt:] == table.written_labels[:-1]  # a written token is a column once read
    assert table.probabilities == [step.choice.probability for step in generation.steps]


def test_a_row_label_keeps_its_probability_whole():
    assert row_label(" Paris", 0.7712) == " Paris  77 %"
    assert percent_text(0.045) == "4.5 %" and percent_text(0.0002) == "<0.1 %" and percent_text(1.0) == "100 %"
    assert row_label("Switzerland", 0.021, lambda token, percent: token[:5] + "…") == "Switz…  2.1 %"


def test_a_layer_or_head_that_is_not_there_is_refused(llama):
    model, generation = llama
    with pytest.raises(ExportError, match="no head 9 in layer 1"):
        generation_table(model, generation, 0, 8)


def test_the_command_makes_the_same_generation_again(llama):
    model, _ = llama
    drawn = generate(model, PROMPT, GenerationSettings(3, Sampling(0.8, 20, 0.9, 5), ablate=frozenset({(1, 0)})))
    command = generate_command(model, drawn, 1, 3, "out/gen.gif", 2, "row")
    assert command == (f"attention-explorer generate --model {LLAMA} --prompt 'the cat sat on the mat' --tokens 3 "
                       "--temperature 0.8 --top-k 20 --top-p 0.9 --seed 5 --ablate 2:1 --layer 2 --head 4 "
                       "--span row --image-scale 2 -o out/gen.gif")


# --- PNG -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [1, 2])
def test_the_png_cells_are_the_weights_colours(qapp, llama, tmp_path, scale):
    model, generation = llama
    target = tmp_path / "gen.png"
    write_generation_figure(target, model, generation, 0, 1, scale, span="fixed")
    image = QtGui.QImage(str(target))
    table = generation_table(model, generation, 0, 1)
    with built_generation_figure(model, generation, 0, 1, "fixed") as drawn:
        assert (image.width(), image.height()) == (round(drawn.figure.width * scale),
                                                   round(drawn.figure.height * scale))
        places = drawn.places()
        rows, columns = table.shape
        for row in (0, 3, rows - 1):
            weights = table.weights[row, :table.prompt_length + row]
            for column in (int(np.argmax(weights)), int(np.argmin(weights))):
                drawn_colour = _rgb(image, places.cell(row, column), scale)
                assert _close(drawn_colour, _viridis(weights[column])), (row, column, drawn_colour)
        # the upper right, not yet written: hatched on the background, no colour of the map
        corner = places.cell(0, columns - 1)
        inside = [_rgb(image, corner + QtCore.QPointF(dx, dy), scale) for dx in range(-5, 6) for dy in range(-5, 6)]
        assert all(max(c) - min(c) <= 6 for c in inside) and WHITE in inside and min(min(c) for c in inside) < 230
        # the line at the prompt's end, in the written tokens' colour, down every row
        edge = places.cell(rows - 1, table.prompt_length - 0.5)
        line = [_rgb(image, edge + QtCore.QPointF(dx / scale, 0), scale) for dx in range(-2, 3)]
        assert any(_close(c, QtGui.QColor(WRITTEN_COLOUR).getRgb()[:3], 40) for c in line), line


def test_each_row_over_its_largest_with_span_row(qapp, llama, tmp_path):
    model, generation = llama
    target = tmp_path / "gen.png"
    write_generation_figure(target, model, generation, 1, 0, span="row")
    image = QtGui.QImage(str(target))
    table = generation_table(model, generation, 1, 0)
    with built_generation_figure(model, generation, 1, 0, "row") as drawn:
        places = drawn.places()
        weights = table.weights[2, :table.prompt_length + 2]
        for column in range(len(weights)):
            expected = _viridis(weights[column] / weights.max())
            assert _close(_rgb(image, places.cell(2, column)), expected), column


def test_the_png_carries_its_caption_and_the_command_not_a_view(qapp, llama, tmp_path):
    model, generation = llama
    target = tmp_path / "gen.png"
    write_generation_figure(target, model, generation, 0, 0)
    chunks = {}
    for kind, body in png_chunks(target.read_bytes()):
        if kind == b"iTXt":
            keyword, _, rest = body.partition(b"\0")
            chunks[keyword.decode()] = rest[4:].decode()
    assert chunks[GENERATION_KEYWORD].startswith(f"attention-explorer generate --model {LLAMA} --prompt ")
    assert chunks[GENERATION_KEYWORD].endswith(f"--layer 1 --head 1 -o {target}")
    caption = chunks["Description"]
    assert "tiny-llama.gguf" in caption and f"“{PROMPT}”" in caption and "greedy" in caption
    assert f"{STEPS} tokens written, stopped at the number of tokens asked for" in caption
    assert "no head switched off" in caption and "prompt | written" in caption
    assert png_metadata(target.read_bytes()) is None  # dropped on the window, it is not mistaken for a view


# --- SVG -----------------------------------------------------------------------------------------------

def test_the_svg_writes_the_tokens_as_text_the_written_ones_in_their_colour(qapp, llama, tmp_path):
    model, generation = llama
    target = tmp_path / "gen.svg"
    write_generation_figure(target, model, generation, 0, 0)
    root = ET.parse(target).getroot()
    texts = [(t.text or "", (t.get("fill") or "").lower()) for t in root.iter(f"{{{SVG_NS}}}text")]
    table = generation_table(model, generation, 0, 0)
    written = {text for text, fill in texts if fill == WRITTEN_COLOUR.lower()}
    plain = {text for text, fill in texts if fill == "#000000"}
    prompt_labels = set(table.column_labels[:table.prompt_length])
    assert prompt_labels <= plain and not prompt_labels & written
    assert set(table.column_labels[table.prompt_length:]) <= written
    assert "written" in written and any(text.startswith("token read: prompt") for text, _ in texts)  # the legend
    assert any(text.startswith(f"{table.written_labels[0][:3]}") and "%" in text for text in plain)  # a row
    assert any("layer 1, head 1 of 4" in text for text, _ in texts)
    assert read_metadata(target.read_text()) is None  # not a view state ...
    meta = root.find(f"{{{SVG_NS}}}metadata")
    assert meta.get("id") == GENERATION_KEYWORD and meta.text.startswith("attention-explorer generate")


def test_an_svg_has_no_scale_and_a_wrong_file_is_refused(qapp, llama, tmp_path):
    model, generation = llama
    with pytest.raises(ExportError, match="drawn as .png, .svg, .gif, not .pdf"):
        write_generation_figure(tmp_path / "gen.pdf", model, generation, 0, 0)
    with pytest.raises(ExportError, match="image scale must be one of 1, 2, 4, not 3"):
        write_generation_figure(tmp_path / "gen.png", model, generation, 0, 0, 3)
    with pytest.raises(ExportError, match="cannot write"):
        write_generation_figure(tmp_path / "no" / "gen.png", model, generation, 0, 0)
    assert not any(tmp_path.iterdir())


# --- GIF -----------------------------------------------------------------------------------------------

def gif_frame_delays(data: bytes) -> list[int]:
    """Each frame's delay in hundredths of a second, walking the GIF's blocks (no image library)."""
    assert data[:6] in (b"GIF87a", b"GIF89a")
    flags = data[10]
    at = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    delays, delay = [], 0
    while True:
        block = data[at]
        if block == 0x3B:  # trailer
            return delays
        if block == 0x21:  # extension: label, then sub-blocks
            label = data[at + 1]
            if label == 0xF9:
                delay = struct.unpack("<H", data[at + 4:at + 6])[0]
            at += 2
            while data[at]:
                at += data[at] + 1
            at += 1
        elif block == 0x2C:  # an image: descriptor, local colour table, LZW data
            image_flags = data[at + 9]
            at += 10 + (3 << ((image_flags & 7) + 1) if image_flags & 0x80 else 0)
            at += 1  # LZW minimum code size
            while data[at]:
                at += data[at] + 1
            at += 1
            delays.append(delay)
        else:
            raise AssertionError(f"not a GIF block: {block:#x} at {at}")


def test_the_gif_writes_a_row_a_frame_and_holds_the_last(qapp, llama, tmp_path):
    model, generation = llama
    target = tmp_path / "gen.gif"
    write_generation_figure(target, model, generation, 0, 0)
    delays = gif_frame_delays(target.read_bytes())
    assert delays == [GIF_STEP_MS // 10] * (STEPS - 1) + [GIF_LAST_MS // 10]
    reader = QtGui.QImageReader(str(target))
    assert reader.imageCount() in (STEPS, 0)  # Qt's reader counts the frames, or says it cannot tell
    frames = []
    while reader.canRead():
        frames.append(reader.read().convertToFormat(QtGui.QImage.Format.Format_RGB32))
    assert len(frames) == STEPS
    first, last = frames[0], frames[-1]
    # what is no step's stays from the first frame: the titles, the left axis' title, the caption
    assert first.copy(0, 0, 30, first.height()) == last.copy(0, 0, 30, last.height())
    assert first.copy(0, 0, first.width(), 30) == last.copy(0, 0, last.width(), 30)
    table = generation_table(model, generation, 0, 0)
    with built_generation_figure(model, generation, 0, 0) as drawn:
        places = drawn.places()
        assert (first.width(), first.height()) == (round(drawn.figure.width), round(drawn.figure.height))
        caption = round(drawn.figure.texts[-1][0].top())
        assert first.copy(0, caption, first.width(), first.height() - caption) == \
            last.copy(0, caption, last.width(), last.height() - caption)
        for shown, frame in enumerate(frames, start=1):
            for row in range(STEPS):
                colour = _rgb(frame, places.cell(row, 0))
                assert _blank(colour) == (row >= shown), (shown, row, colour)  # later rows not yet there
            # a token's label over its column shows from the frame that wrote it: the last column's
            # (token STEPS - 1) in the last two frames only
            label = places.cell(-1.2, table.shape[1] - 1)
            strip = [_rgb(frame, label + QtCore.QPointF(0, -dy)) for dy in range(0, 30)]
            assert all(map(_blank, strip)) == (shown < STEPS - 1), shown


def test_a_long_generation_plays_in_fewer_frames_and_faster():
    assert gif_frames(5, 1000) == [1, 2, 3, 4, 5]
    grouped = gif_frames(1000, 1000)
    assert len(grouped) == MAX_GIF_FRAMES and grouped[-1] == 1000 and grouped == sorted(set(grouped))
    assert len(gif_frames(300, 16_000_000)) == 16  # 256 MiB of frames of 16 megapixels
    assert gif_durations(3) == [GIF_STEP_MS, GIF_STEP_MS, GIF_LAST_MS]
    assert gif_durations(400)[0] == 70 and gif_durations(400)[-1] == GIF_LAST_MS


def test_a_picture_too_large_for_its_scale_is_refused_in_advance():
    check_size(20, 100, 1)
    with pytest.raises(ExportError, match=r"at --image-scale 4, too large for a PNG or GIF: give a smaller"):
        check_size(20, 300, 4)


def test_gpt2_too(qapp, tmp_path):
    model = open_pretrained(GPT2)
    generation = generate(model, PROMPT, GenerationSettings(4))
    write_generation_figure(tmp_path / "gen.png", model, generation, 1, 3)
    assert QtGui.QImage(str(tmp_path / "gen.png")).width() > 300


def _metaobject_wrappers() -> int:
    gc.collect()
    return sum(type(w) is QtCore.QMetaObject for w in shiboken6.getAllValidWrappers())


def test_a_figure_leaves_no_metaobject_wrapper_behind(qapp, llama):
    """A figure once coloured its written labels through a class made anew for each figure. Each class left
    the wrapper of its metaobject in Shiboken's map at an address freed with it: a later widget's layout
    or menu allocated there was handed that wrapper (pyqtgraph's menu came back as a QMetaObject, and a
    widget's deferred deletion crashed with a segmentation fault)."""
    model, generation = llama
    counts = []
    for _ in range(3):
        with built_generation_figure(model, generation, 0, 0):
            pass
        counts.append(_metaobject_wrappers())
    assert counts == [counts[0]] * 3
    menu = QtWidgets.QMenu()
    assert type(menu.addMenu("a submenu")) is QtWidgets.QMenu
    menu.deleteLater()
