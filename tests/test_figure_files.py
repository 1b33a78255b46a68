"""Figure files: each PNG, SVG and PDF carries its view state and gives it back; sizes as a scale, a
width in pixels or a print width; themes; and files read back as untrusted input."""

import os
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest
from PIL import Image

from attention_explorer import engine
from attention_explorer.controller import LOOKED_AT, Controller
from attention_explorer.figure_controller import FigureController, capture_state
from attention_explorer.figure_files import write_figure
from attention_explorer.figure_metadata import pdf_metadata, pdf_with_metadata, png_dpi, png_metadata, png_with_metadata
from attention_explorer.figure_options import FigureOptions, FigureSize
from attention_explorer.headless import destroy_now
from attention_explorer.svg_fixes import SVG_NS, fix_svg, read_metadata, without_group_opacity
from attention_explorer.view_file import ViewFileError, read_view, write_view_file


@pytest.fixture
def controller(qapp):
    made = Controller(engine.load_builtin("cat-ate-fish"))
    made.set_pinned(3, LOOKED_AT)
    yield made
    destroy_now(made)


def write(controller, path, view="heatmap", **options):
    copy = FigureController.copy_of(controller)
    try:
        state = capture_state(controller, view)
        write_figure(copy, state, FigureOptions(**options), path)
    finally:
        destroy_now(copy)
    return state


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_each_figure_carries_its_view_and_gives_it_back(controller, tmp_path, suffix):
    target = tmp_path / f"figure{suffix}"
    state = write(controller, target)
    assert read_view(target) == state
    assert state.focus.word == "its" and state.focus.role == "looked_at" and state.options["causal"]


def test_a_view_file_holds_the_same_state(controller, tmp_path):
    state = capture_state(controller, "arcs")
    write_view_file(tmp_path / "v.aeview", state)
    assert read_view(tmp_path / "v.aeview") == state


@pytest.mark.parametrize("size, width, dpi", [
    (FigureSize(scale=1), 820, 96), (FigureSize(scale=2), 1640, 192), (FigureSize(scale=4), 3280, 384),
    (FigureSize(width_px=1200), 1200, None), (FigureSize(width_cm=8.5, dpi=300), 1004, 300),
])
def test_the_size_is_a_scale_a_width_in_pixels_or_a_print_width(controller, tmp_path, size, width, dpi):
    target = tmp_path / "f.png"
    write(controller, target, size=size)
    with Image.open(target) as image:
        assert image.width == width
    if dpi is not None:
        assert png_dpi(target.read_bytes()) == pytest.approx(dpi, abs=0.05)


def test_a_print_width_makes_an_svg_and_a_pdf_page_of_that_width(controller, tmp_path):
    write(controller, tmp_path / "f.svg", size=FigureSize(width_cm=8.5))
    assert 'width="8.5cm"' in (tmp_path / "f.svg").read_text()
    write(controller, tmp_path / "f.pdf", size=FigureSize(width_cm=8.5))
    media = (tmp_path / "f.pdf").read_bytes().split(b"/MediaBox")[1].split(b"]")[0]
    width_points = float(media.strip(b" [").split()[2])
    assert width_points == pytest.approx(8.5 / 2.54 * 72, abs=0.5)


def corner_and_text(path):
    pixels = np.asarray(Image.open(path).convert("RGBA"))
    corner = pixels[2, 2]
    ink = pixels[pixels[..., 3] > 200]
    return corner, ink


@pytest.mark.parametrize("theme, corner_alpha, background, text_light", [
    ("light", 255, (255, 255, 255), False), ("dark", 255, (0x20, 0x21, 0x24), True),
    ("transparent-light", 0, None, False), ("transparent-dark", 0, None, True),
])
def test_each_theme_sets_the_background_and_the_text_follows(controller, tmp_path, theme, corner_alpha,
                                                               background, text_light):
    target = tmp_path / "f.png"
    write(controller, target, "arcs", theme=theme)
    pixels = np.asarray(Image.open(target).convert("RGBA"))
    assert pixels[2, 2, 3] == corner_alpha
    if background is not None:
        assert tuple(pixels[2, 2, :3]) == background
    caption = pixels[-20:-5, 10:300]  # the caption's first words
    opaque = caption[caption[..., 3] > 200][:, :3]
    darkest = opaque.sum(axis=1).min() if len(opaque) else 765
    brightest = opaque.sum(axis=1).max() if len(opaque) else 0
    assert (brightest > 600) if text_light else (darkest < 150), f"{theme}: the caption's ink does not follow"


def test_the_window_theme_is_left_as_it_was(controller, tmp_path):
    from attention_explorer.views import theme

    before = theme.background().name(), theme.foreground().name()
    write(controller, tmp_path / "f.png", theme="dark")
    assert (theme.background().name(), theme.foreground().name()) == before


# --- metadata, as untrusted bytes ----------------------------------------------------------------------

def tiny_png() -> bytes:
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\0"))
            + chunk(b"IEND", b""))


def test_a_png_keeps_the_state_in_a_text_chunk_that_other_readers_ignore(tmp_path):
    data = png_with_metadata(tiny_png(), state='{"a": "ü"}', description="a caption", dpi=300)
    assert png_metadata(data) == '{"a": "ü"}' and png_dpi(data) == pytest.approx(300, abs=0.05)
    (tmp_path / "x.png").write_bytes(data)
    with Image.open(tmp_path / "x.png") as image:
        image.load()
        assert image.size == (1, 1) and image.info.get("Description") == "a caption"


@pytest.mark.parametrize("damage", [
    lambda d: d[:40],                                     # cut short inside a chunk
    lambda d: d[:8] + b"\xff\xff\xff\xff" + d[12:],       # a chunk longer than the file
    lambda d: b"GIF89a" + d[6:],                          # not a PNG at all
    lambda d: d.replace(b"attention-explorer-view\0\0", b"attention-explorer-view\0\1"),  # "compressed", not
])
def test_a_damaged_png_gives_no_state_and_raises_nothing(damage):
    data = png_with_metadata(tiny_png(), state="{}", description="", dpi=96)
    assert png_metadata(damage(data)) in (None, "{}")


def test_a_pdf_update_keeps_the_old_document_and_adds_the_state(controller, tmp_path):
    write(controller, tmp_path / "f.pdf")
    data = (tmp_path / "f.pdf").read_bytes()
    again = pdf_with_metadata(data, '{"newer": true}')
    assert again.startswith(data) and pdf_metadata(again) == '{"newer": true}'
    assert pdf_metadata(b"%PDF-1.4 nothing here") is None
    assert pdf_metadata(b"/AttentionExplorerView <zz>") is None


def test_svg_metadata_survives_an_editor_that_escapes_it():
    text = '<svg><metadata id="attention-explorer-view">{&quot;a&quot;: &lt;1&gt;}</metadata></svg>'
    assert read_metadata(text) == '{"a": <1>}'
    assert read_metadata("<svg></svg>") is None


@pytest.mark.parametrize("make, message", [
    (lambda p: os.mkfifo(p) or p, "not a regular file"),
    (lambda p: p.mkdir() or p, "is a folder"),
    (lambda p: (p.write_bytes(b"\x89PNG\r\n\x1a\n junk"), p)[1], "carries no Attention Explorer view"),
    (lambda p: p, "no such file"),
])
def test_reading_a_figure_refuses_pipes_folders_and_junk_in_one_message(tmp_path, make, message):
    path = make(tmp_path / "x.png")
    with pytest.raises(ViewFileError, match=message):
        read_view(path)


def test_a_view_file_larger_than_any_view_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.aeview"
    with path.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)  # sparse: nothing is written
    with pytest.raises(ViewFileError, match="may be at most 16 MB"):
        read_view(path)


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"), ('{"format": "attention-explorer-view", "version": 9}', "a damaged view"),
    ("[" * 100 + "]" * 100, "nested more than"),
])
def test_a_damaged_view_file_says_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "v.aeview"
    path.write_text(text)
    with pytest.raises(ViewFileError, match=message):
        read_view(path)


# --- SVG fixes ---------------------------------------------------------------------------------------------

SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 100 100">'
       b'<title>t</title><desc>d</desc>'
       b'<g stroke="#f00" stroke-width="2" transform="matrix(50,0,0,50,10,20)" font-family="Sans Serif">'
       b'<rect vector-effect="non-scaling-stroke" x="-0.5" y="1.5" width="2" height="1"/></g>'
       b'<g fill="#00f" stroke="none" transform="matrix(10,0,0,-10,0,90)"><path vector-effect="none" '
       b'd="M0,0 L1,0 L1,2 L0,2 Z"/></g>'
       b'<g opacity="0.25" stroke-opacity="0.8"><polyline points="0,0 1,1"/></g>'
       b'<g></g><g font-family="Sans Serif"><text font-family="Sans Serif" font-size="11.3333" x="1" y="2">w</text></g>'
       b'<g fill="none" stroke="none"><rect x="0" y="0" width="50" height="50"/></g>'
       b'<defs><clipPath id="c"><rect fill="none" stroke="none" x="0" y="0" width="9" height="9"/></clipPath></defs>'
       b'</svg>')


def fixed() -> str:
    return fix_svg(SVG, family="DejaVu Sans", drawn_size=round, title="T", description="D", metadata='{"x": 1}',
                   width="100", height="100").decode()


def test_the_svg_fixes_move_scaling_into_the_shapes_and_name_a_font_stack():
    text = fixed()
    assert 'x="-15" y="95" width="100" height="50"' in text  # the frame at its size, its stroke 2 px wide
    assert "non-scaling-stroke" not in text and 'vector-effect="none"' not in text
    assert 'd="M0,90 L10,90 L10,70 L0,70 Z"' in text  # the unstroked bar too
    assert "Sans Serif" not in text and "font-family=\"'DejaVu Sans', 'Helvetica Neue'" in text
    assert text.count("<g") == 4  # the empty group dropped, and the one whose only shape draws nothing
    assert 'font-size="11"' in text  # the size the font was drawn at, not the one asked for
    assert 'width="50"' not in text and 'width="9"' in text  # a clip path's shape kept
    assert read_metadata(text) == '{"x": 1}' and "<title>T</title>" in text


def test_group_opacity_moves_into_the_shapes_for_the_pdf():
    text = without_group_opacity(SVG).decode()
    assert ' opacity="' not in text and 'stroke-opacity="0.2"' in text and 'fill-opacity="0.25"' in text


def test_consecutive_groups_at_one_opacity_become_one_group_dimmed_as_a_whole():
    """Qt writes an item drawn at an opacity (the arcs' lines dimmed under a focused word) as a group per
    pen, each at that opacity: where lines of two groups crossed they darkened each other in every
    viewer, while the PNG dims the item's picture as a whole. A run of groups at one opacity becomes one
    group at that opacity; groups at another opacity, or alone, stay as they are."""
    lines = "".join(f'<g opacity="0.25" stroke="#{c}" stroke-opacity="0.5"><polyline points="0,{i} 9,{9 - i}"/></g>'
                    for i, c in enumerate(("f00", "0f0", "00f")))
    svg = (f'<svg xmlns="{SVG_NS}" viewBox="0 0 9 9"><g stroke="#000"><polyline points="0,0 9,0"/></g>{lines}'
           f'<g opacity="0.5" stroke="#000"><polyline points="0,9 9,9"/></g>'
           f'<g opacity="0.25" stroke="#000"><polyline points="0,5 9,5"/></g></svg>').encode()
    root = ET.fromstring(fix_svg(svg, family="DejaVu Sans", drawn_size=round, title="T", description="D",
                                 metadata=None, width="9", height="9"))
    groups = root.findall(f"{{{SVG_NS}}}g")
    assert [group.get("opacity") for group in groups] == [None, "0.25", "0.5", "0.25"]
    dimmed = groups[1].findall(f"{{{SVG_NS}}}g")
    assert [group.get("stroke") for group in dimmed] == ["#f00", "#0f0", "#00f"]  # in their order
    assert all(group.get("opacity") is None and group.get("stroke-opacity") == "0.5" for group in dimmed)
    flat = ET.fromstring(without_group_opacity(ET.tostring(root)))  # the PDF's: each line's own opacity
    assert {group.get("stroke-opacity") for group in flat.iter(f"{{{SVG_NS}}}g") if group.get("stroke") == "#0f0"} \
        == {"0.125"}


def test_characters_xml_does_not_allow_are_shown_as_their_pictures():
    """Qt writes a text's characters into the SVG as they come: a control character made the file
    ill-formed. The fixed SVG shows each as its picture, in Qt's text and in the title, description
    and view state alike."""
    svg = SVG.replace(b">w</text>", b">a\x0bb\x01\xef\xbf\xbe</text>")
    text = fix_svg(svg, family="DejaVu Sans", drawn_size=round, title="T\x0c", description="D\x00",
                   metadata='{"x": "\x1f"}', width="100", height="100")
    root = ET.fromstring(text)
    assert "a␋b␁\ufffd" in "".join(root.itertext())
    assert root.find(f"{{{SVG_NS}}}title").text == "T␌" and root.find(f"{{{SVG_NS}}}desc").text == "D␀"
    assert read_metadata(text.decode()) == '{"x": "␟"}'
    assert b"\x0b" not in without_group_opacity(svg)
