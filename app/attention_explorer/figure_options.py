"""How a figure is made, beside what it shows (figure_state): its theme, caption, title and size.

The size is a layout width (what the views are laid out at, in pixels of a 96-dpi screen) and a pixel
ratio. A scale (1×, 2×, 4×) keeps the layout and multiplies its pixels; a width in pixels scales the
layout to it; a print width in centimetres lays the figure out at that width on paper, so its text
prints at the sizes it has on screen, and the dpi gives its pixels (a journal column: 8.5 cm at 300
dpi is 1,004 pixels). A heatmap's labels and colour bar need MIN_PRINT_LAYOUT_PX, so a narrower print
width is laid out at that and scaled down, its text with it (8.5 cm: 321 pixels, text at 76 %, the
7 pt a journal asks for at least). No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SCREEN_DPI = 96
CM_PER_INCH = 2.54
SCALES = (1, 2, 4)
WIDTH_PX_RANGE = (64, 16_384)
WIDTH_CM_RANGE = (2.0, 100.0)
DPI_RANGE = (72, 1200)
JOURNAL_COLUMN_CM = 8.5
DEFAULT_DPI = 300
MIN_PRINT_LAYOUT_PX = 420
THEMES = ("light", "dark", "transparent-light", "transparent-dark")  # see views.theme.FIGURE_THEMES
IMAGE_FORMATS = (".png", ".svg", ".pdf")
FIGURE_FORMATS = (*IMAGE_FORMATS, ".html", ".gif")


class FigureOptionError(ValueError):
    """A size or theme that cannot be used; the message says which and what is allowed."""


@dataclass(frozen=True)
class FigureSize:
    """One of: a scale of the layout, a width in pixels, or a print width in cm at a dpi."""

    scale: float = 1.0
    width_px: int | None = None
    width_cm: float | None = None
    dpi: int = DEFAULT_DPI

    def __post_init__(self):
        if self.width_px is not None and self.width_cm is not None:
            raise FigureOptionError("give a width in pixels or in centimetres, not both")
        if self.width_px is not None and not WIDTH_PX_RANGE[0] <= self.width_px <= WIDTH_PX_RANGE[1]:
            raise FigureOptionError(f"a width in pixels must be from {WIDTH_PX_RANGE[0]} to {WIDTH_PX_RANGE[1]:,}")
        if self.width_cm is not None and not WIDTH_CM_RANGE[0] <= self.width_cm <= WIDTH_CM_RANGE[1]:
            raise FigureOptionError(f"a print width must be from {WIDTH_CM_RANGE[0]:g} to {WIDTH_CM_RANGE[1]:g} cm")
        if not DPI_RANGE[0] <= self.dpi <= DPI_RANGE[1]:
            raise FigureOptionError(f"the dpi must be from {DPI_RANGE[0]} to {DPI_RANGE[1]}")
        if not 0.25 <= self.scale <= 8:
            raise FigureOptionError("the scale must be from 0.25 to 8")

    @property
    def printed(self) -> bool:
        return self.width_cm is not None

    def layout_width(self, natural: int) -> int:
        """The width the figure is laid out at: its natural width, or the print width at screen density."""
        if self.width_cm is not None:
            return max(MIN_PRINT_LAYOUT_PX, round(self.width_cm / CM_PER_INCH * SCREEN_DPI))
        return natural

    def pixel_ratio(self, layout_width: int) -> float:
        """Output pixels per layout pixel."""
        if self.width_px is not None:
            return self.width_px / layout_width
        if self.width_cm is not None:
            return self.dpi / SCREEN_DPI
        return self.scale

    def dots_per_inch(self, layout_width: int) -> float:
        """The density written into a PNG, so that it is placed at the size it was laid out for."""
        return self.dpi if self.width_cm is not None else SCREEN_DPI * self.pixel_ratio(layout_width)

    def describe(self) -> str:
        if self.width_px is not None:
            return f"{self.width_px:,} px wide"
        if self.width_cm is not None:
            return f"{self.width_cm:g} cm at {self.dpi} dpi"
        return f"{self.scale:g}×"


@dataclass(frozen=True)
class FigureOptions:
    """What is drawn around the view, and how large. `keep_hover` and `visible_only` come from the window:
    the word under the mouse kept (as on screen), and only the rows and columns the heatmap shows."""

    theme: str = "light"
    caption: bool = True
    title: str = ""
    size: FigureSize = field(default_factory=FigureSize)
    keep_hover: bool = False
    visible_only: bool = False

    def __post_init__(self):
        if self.theme not in THEMES:
            raise FigureOptionError(f"a theme is one of {', '.join(THEMES)}, not {self.theme!r}")
        if len(self.title) > 500:
            raise FigureOptionError("a title may have at most 500 characters")

    def to_dict(self) -> dict:
        size = self.size
        return {"theme": self.theme, "caption": self.caption, "title": self.title,
                "size": {"scale": float(size.scale), "width_px": size.width_px, "width_cm": size.width_cm,
                         "dpi": size.dpi}}
