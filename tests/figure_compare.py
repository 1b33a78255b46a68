"""Comparing two renderings of one figure (Qt's PNG, and its SVG drawn by librsvg or Chromium, or its PDF
by poppler): how far apart they are overall, and where they differ most, with a diff image to look at.

Two renderers never antialias text and slanted lines alike, and Qt hints its glyphs (a line of text
comes out a pixel or two shorter than in librsvg or Chromium), so single pixels at glyph and line
edges differ; a wrong font, a missing or extra shape, or blurred cells differ over whole areas. So
both images are first smoothed over SMOOTH × SMOOTH pixels (what a glance sees), then:
- `differing`: the share of pixels whose largest channel differs by more than PIXEL_TOLERANCE;
- `worst_block`: the share of differing pixels in the worst BLOCK × BLOCK square. Edges of glyphs fill
  a block only partly; a shape one renderer lacks (the pink hexagon librsvg once drew over three rows)
  or a word in another font fills it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

PIXEL_TOLERANCE = 48   # of 255, after smoothing: more than antialiasing moves a colour
BLOCK = 16
SMOOTH = 5
# The bounds, measured on every figure and lesson the tests draw. librsvg's and Chromium's drawings of
# the SVG differ from Qt's PNG on at most 0.1 % of the pixels and 25 % of the worst block (glyph
# edges; the pinned frame's outer half, which the window clips and SVG Tiny cannot); poppler's of the
# PDF on at most 3 % and 40 % (it resamples the model view's thumbnails: their cell edges soften by
# a pixel). Past them is what a glance sees: the SVG as Qt writes it, unfixed, differed on 53 %
# (librsvg's pink hexagon over three rows), on 5–6 % with 55–59 % blocks (blurred thumbnails), 61 %
# in a block of serif text (Chromium), and a font size Qt did not draw moved captions off the edge.
MOST_DIFFERING = {"svg": 0.005, "pdf": 0.03}   # of the pixels
WORST_BLOCK = {"svg": 0.35, "pdf": 0.45}       # of a 16 × 16 block


@dataclass
class Difference:
    mean: float          # mean absolute difference, 0–255
    differing: float     # share of pixels beyond PIXEL_TOLERANCE
    worst_block: float   # share of differing pixels in the worst block
    worst_at: tuple[int, int]

    def __str__(self) -> str:
        return (f"mean difference {self.mean:.2f}/255, {self.differing:.2%} of pixels differ, worst "
                f"{BLOCK}×{BLOCK} block {self.worst_block:.0%} at x={self.worst_at[0]}, y={self.worst_at[1]}")


def on_white(image: Image.Image) -> np.ndarray:
    """RGB as it shows on a white page (transparent parts white)."""
    rgba = image.convert("RGBA")
    page = Image.new("RGBA", rgba.size, "white")
    page.alpha_composite(rgba)
    return np.asarray(page.convert("RGB"), dtype=np.int16)


def smoothed(pixels: np.ndarray) -> np.ndarray:
    """The mean over SMOOTH × SMOOTH pixels around each pixel (a box filter, edges repeated)."""
    pad = SMOOTH // 2
    padded = np.pad(pixels.astype(np.float64), ((pad, pad), (pad, pad), (0, 0)), mode="edge")
    sums = padded.cumsum(0).cumsum(1)
    sums = np.pad(sums, ((1, 0), (1, 0), (0, 0)))
    h, w = pixels.shape[:2]
    total = (sums[SMOOTH:SMOOTH + h, SMOOTH:SMOOTH + w] - sums[:h, SMOOTH:SMOOTH + w]
             - sums[SMOOTH:SMOOTH + h, :w] + sums[:h, :w])
    return total / (SMOOTH * SMOOTH)


def difference(first: Image.Image, second: Image.Image) -> Difference:
    a, b = on_white(first), on_white(second)
    height, width = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    a, b = smoothed(a[:height, :width]), smoothed(b[:height, :width])
    delta = np.abs(a - b).max(axis=2)
    bad = delta > PIXEL_TOLERANCE
    rows, cols = height // BLOCK, width // BLOCK
    blocks = bad[:rows * BLOCK, :cols * BLOCK].reshape(rows, BLOCK, cols, BLOCK).mean(axis=(1, 3))
    worst = np.unravel_index(int(np.argmax(blocks)), blocks.shape) if blocks.size else (0, 0)
    return Difference(float(np.abs(a - b).mean()), float(bad.mean()), float(blocks.max(initial=0.0)),
                      (int(worst[1]) * BLOCK, int(worst[0]) * BLOCK))


def save_diff(first: Image.Image, second: Image.Image, path: Path) -> Path:
    """The two side by side and, third, their difference (red where beyond the tolerance)."""
    a, b = on_white(first), on_white(second)
    height, width = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
    a, b = a[:height, :width], b[:height, :width]
    bad = np.abs(smoothed(a) - smoothed(b)).max(axis=2) > PIXEL_TOLERANCE
    marked = (a * 0.3 + 178).astype(np.uint8)
    marked[bad] = (255, 0, 0)
    strip = np.concatenate([a.astype(np.uint8), b.astype(np.uint8), marked], axis=1)
    Image.fromarray(strip).save(path)
    return path


def assert_alike(png: Image.Image, other: Image.Image, diff_path: Path, who: str, kind: str) -> None:
    """`other` (drawn by `who` from the figure's `kind` of file, "svg" or "pdf") within the bounds of
    Qt's `png`, else a failure that says by how much and leaves the diff image at `diff_path`."""
    assert abs(png.width - other.width) <= 1 and abs(png.height - other.height) <= 1, \
        f"{who} drew {other.size}, Qt {png.size}"
    found = difference(png, other)
    if found.differing > MOST_DIFFERING[kind] or found.worst_block > WORST_BLOCK[kind]:
        save_diff(png, other, diff_path)
        pytest.fail(f"{who} does not draw what Qt draws: {found}; see {diff_path}")


def rsvg(svg: Path, png: Path, width: int) -> Image.Image:
    subprocess.run(["rsvg-convert", "--width", str(width), "--keep-aspect-ratio", str(svg), "-o", str(png)],
                   check=True, timeout=120)
    return Image.open(png)


def pdftoppm(pdf: Path, stem: Path, dpi: float) -> Image.Image:
    subprocess.run(["pdftoppm", "-r", f"{dpi:g}", "-singlefile", "-png", str(pdf), str(stem)], check=True, timeout=120)
    return Image.open(stem.with_suffix(".png"))
