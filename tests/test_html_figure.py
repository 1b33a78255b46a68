"""The interactive web page: self-contained (no request leaves it, no external script), small, and its
hover works in a real browser: hovering a word frames its row and writes where it looks."""

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from attention_explorer import engine
from attention_explorer.cli import main
from attention_explorer.html_figure import MASKED, encoded_values
from chromium import Chromium, chromium_path

HIGHLIGHT = (0xD6, 0x33, 0x6C)


def sentence(words: int) -> str:
    return " ".join(("the cat sat on the mat " * (words // 6 + 1)).split()[:words])


@pytest.fixture
def page(tmp_path, capsys):
    def make(words: int = 6, *extra: str):
        target = tmp_path / f"page-{words}.html"
        assert main(["export", "--sentence", sentence(words), *extra, "-o", str(target)]) == 0, capsys.readouterr().err
        return target
    return make


def test_the_page_holds_everything_it_needs_and_forbids_any_request(page):
    text = page().read_text(encoding="utf-8")
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", text), "the page loads something from elsewhere"
    assert "<script src" not in text and "@import" not in text


def test_the_page_stays_small_as_the_text_grows(page):
    sizes = {n: page(n).stat().st_size for n in (12, 128, 512)}
    # two bytes a cell in base64 (8/3 characters) and a few kilobytes of script: 512² cells ≈ 700 kB
    for n, size in sizes.items():
        assert size < 12_000 + n * n * 3, f"{n} words: {size:,} bytes"


def test_values_are_coded_in_sixteen_bits_between_the_levels_with_masked_cells_apart():
    import base64

    matrix = np.array([[0.0, 0.5], [1.0, -np.inf]])
    codes = np.frombuffer(base64.b64decode(encoded_values(matrix, None, (0.0, 1.0))), dtype="<u2")
    assert codes.tolist() == [0, 32767, 65534, MASKED]


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed")
def test_hovering_a_word_in_chromium_frames_its_row_and_says_where_it_looks(page, tmp_path):
    target = page(6, "--no-caption")
    trace = engine.run(engine.load_builtin("cat-sat-on-mat"), sentence(6), engine.Options(heads=2))
    sat = trace.labels.index("sat")
    with Chromium(tmp_path / "profile") as browser:
        browser.open(target.as_uri(), 1000, 900)
        assert browser.evaluate("attentionFigure.n") == 6
        origin = browser.evaluate("attentionFigure.origin()")
        label = browser.evaluate(f"attentionFigure.rowLabel({sat})")
        browser.move_mouse(origin["x"] + label["x"], origin["y"] + label["y"])
        assert browser.evaluate("attentionFigure.focus()") == {"index": sat, "role": "looking"}
        readout = browser.evaluate("document.getElementById('readout').textContent")
        weights = trace.heads[0].weights[sat]
        best = int(np.argmax(weights))
        assert readout.startswith(f"where “sat” looks: {trace.labels[best]} {100 * weights[best]:.1f} %")
        shot = tmp_path / "hover.png"
        shot.write_bytes(browser.screenshot())
        left = browser.evaluate(f"attentionFigure.cell({sat}, 0)")
        right = browser.evaluate(f"attentionFigure.cell({sat}, 5)")
        cell = right["x"] - browser.evaluate(f"attentionFigure.cell({sat}, 4)")["x"]
        top_edge = round(origin["y"] + left["y"] - cell / 2)
        pixels = Image.open(shot).convert("RGB")
        framed = [pixels.getpixel((round(origin["x"] + x), top_edge))
                  for x in range(round(left["x"]), round(right["x"]))]
        near = sum(max(abs(a - b) for a, b in zip(p, HIGHLIGHT, strict=True)) < 40 for p in framed)
        assert near > 0.8 * len(framed), "the hovered word's row is not framed in the highlight colour"
        other = browser.evaluate(f"attentionFigure.cell({sat + 2}, 0)")
        below = pixels.getpixel((round(origin["x"] + other["x"]), round(origin["y"] + other["y"] - cell / 2)))
        assert max(abs(a - b) for a, b in zip(below, HIGHLIGHT, strict=True)) > 60, "another row is framed too"
        assert [url for url in browser.requests() if not url.startswith("file:")] == []


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed")
def test_a_cross_attention_page_reads_target_rows_against_source_columns_in_chromium(tmp_path, capsys):
    """BART's cross-attention as a page: hovering a source word's column says which target tokens read it
    and frames that column; the rows are the target's tokens."""
    pytest.importorskip("tokenizers")
    from attention_explorer.engine.pretrained.encoder_decoder import open_encoder_decoder
    from attention_explorer.engine.tokenizer import token_labels

    bart = Path(__file__).parent / "engine" / "pretrained" / "data" / "tiny-bart"
    target = tmp_path / "cross.html"
    assert main(["export", "--model", str(bart), "--sentence", "The cat sat on mat", "--target", "Le", "--no-caption",
                 "-o", str(target)]) == 0, capsys.readouterr().err
    result = open_encoder_decoder(bart).run("The cat sat on mat", "Le")
    rows, columns = token_labels(result.target_labels), token_labels(result.source.labels)
    weights = result.cross_attention[0, 0]
    cat = columns.index("cat")
    with Chromium(tmp_path / "profile") as browser:
        browser.open(target.as_uri(), 1000, 700)
        assert browser.evaluate("[attentionFigure.n, attentionFigure.nKeys]") == [len(rows), len(columns)]
        assert browser.evaluate("attentionFigure.keyLabels") == columns
        origin = browser.evaluate("attentionFigure.origin()")
        label = browser.evaluate(f"attentionFigure.columnLabel({cat})")
        browser.move_mouse(origin["x"] + label["x"], origin["y"] + label["y"])
        assert browser.evaluate("attentionFigure.focus()") == {"index": cat, "role": "looked_at"}
        readout = browser.evaluate("document.getElementById('readout').textContent")
        best = int(np.argmax(weights[:, cat]))
        assert readout.startswith(f"who looks at “cat”: {rows[best]} {100 * weights[best, cat]:.1f} %"), readout
        assert browser.evaluate("document.getElementById('axes').textContent") == \
            "rows: target · columns: source token looked at"
        shot = tmp_path / "hover.png"
        shot.write_bytes(browser.screenshot())
        top = browser.evaluate(f"attentionFigure.cell(0, {cat})")
        bottom = browser.evaluate(f"attentionFigure.cell({len(rows) - 1}, {cat})")
        cell = browser.evaluate(f"attentionFigure.cell(0, {cat + 1})")["x"] - top["x"]
        left_edge = round(origin["x"] + top["x"] - cell / 2)
        pixels = Image.open(shot).convert("RGB")
        framed = [pixels.getpixel((left_edge, round(origin["y"] + y)))
                  for y in range(round(top["y"]), round(bottom["y"]))]
        near = sum(max(abs(a - b) for a, b in zip(p, HIGHLIGHT, strict=True)) < 40 for p in framed)
        assert near > 0.8 * len(framed), "the hovered source word's column is not framed in the highlight colour"
