"""The command line's figure options, both ways: `attention-explorer export` reads them into a view
state and figure options, and the window's Export dialog writes the command that makes the same
figure. One table of flags serves both, so the two cannot drift apart. No Qt here.
"""

from __future__ import annotations

import argparse
import shlex

from .engine.census.measures import MEASURE_KEYS
from .figure_census import CensusChoice
from .figure_options import (
    DPI_RANGE,
    SCALES,
    THEMES,
    FigureOptionError,
    FigureOptions,
    FigureSize,
)
from .figure_state import COLORMAPS, COLOURED_VIEWS, GRIDS, PARTS, ROLES, SPANS, Focus, ViewState

PROG = "attention-explorer"
READING_FLAGS = {"words": "words", "hide_specials": "hide-specials", "hide_first": "hide-first",
                 "rollout": "rollout"}
ROLE_FLAGS = {"looking": "looking", "looked-at": "looked_at"}


class FigureUsageError(ValueError):
    """Figure options that do not fit together or do not fit the output (one line for the user)."""


def add_figure_arguments(parser: argparse.ArgumentParser) -> None:
    """The export command's options for what a picture shows and how it is drawn."""
    add = parser.add_argument
    add("--colormap", choices=COLORMAPS, default=None, help="the heatmap's colour map (default: viridis)")
    add("--span", choices=SPANS, default=None,
        help="what the weights' colours span: fixed (0–1), data (the shown values), row (each row's own); "
             "default: fixed, or row past 16 words")
    add("--words", action="store_true", help="real models: read the layer as words (pieces merged)")
    add("--hide-specials", action="store_true", help="real models: hide the special tokens, rows renormalised")
    add("--hide-first", action="store_true", help="real models: hide the first token (a sink), rows renormalised")
    add("--rollout", action="store_true", help="real models: attention rollout up to the layer")
    add("--ablate", default=None, metavar="L:H[,L:H…]", help="real models: switch these heads off (from 1)")
    add("--focus", default=None, metavar="WORD[:looking|looked-at]",
        help="pin this word: where it looks (default) or who looks at it; e.g. --focus sat, --focus the₂:looked-at")
    add("--all-heads", action="store_true", help="arcs: every head in its own colour even with --head")
    add("--strongest", type=int, default=None, metavar="K",
        help="arcs: keep each word's K strongest lines (0: all; default: all, or 3 past 24 words)")
    add("--grid", choices=GRIDS, default=None,
        help="small multiples: every head of the layer, or the head in every layer, on one colour scale")
    add("--census", default=None, metavar="MEASURE",
        help="model view: colour each head by this census measure over many texts (as `heads` measures it: "
             "induction, previous, sink, clark_first, entropy, …; taken from the census cache, else measured)")
    add("--census-seed", type=int, default=None, metavar="S", help="with --census: the built-in texts' seed")
    add("--census-texts", default=None, metavar="FILE", help="with --census: measure on these texts instead")
    add("--census-exclude-first", action="store_true", help="with --census: as `heads --exclude-first`")
    add("--census-exclude-diagonal", action="store_true", help="with --census: as `heads --exclude-diagonal`")
    add("--census-epsilon", type=float, default=None, metavar="E", help="with --census: the sink threshold ε")
    add("--caption", action=argparse.BooleanOptionalAction, default=True,
        help="write a caption under the figure: model, text, layer and head, reading, options (default: on)")
    add("--title", default=None, metavar="TEXT", help="a title over the figure")
    add("--theme", choices=THEMES, default=None,
        help="light (default), dark, or transparent for a light or a dark page or slide")
    add("--width-px", type=int, default=None, metavar="PX", help="the image's width in pixels (PNG, SVG)")
    add("--width-cm", type=float, default=None, metavar="CM",
        help="a print width: laid out at this width, its text at print size (a journal column: 8.5)")
    add("--dpi", type=int, default=None, metavar="N", help=f"pixels per inch with --width-cm (default 300; "
                                                           f"{DPI_RANGE[0]}–{DPI_RANGE[1]})")


def _given(args: argparse.Namespace, names) -> list[str]:
    return [f"--{name.replace('_', '-')}" for name in names if getattr(args, name, None) not in (None, False)]


def check_figure_args(args: argparse.Namespace, kind: str, real: bool) -> None:
    """Refuse figure options that would change nothing for this output or this model."""
    view = args.view or "heatmap"
    drawing = _given(args, ("colormap", "span", "focus", "all_heads", "strongest", "grid", "title", "theme",
                            "width_px", "width_cm", "dpi"))
    if not args.caption:
        drawing.append("--no-caption")
    if kind == ".csv" and drawing:
        raise FigureUsageError(f"{drawing[0]} changes a picture; a CSV holds the numbers of one matrix")
    reading = _given(args, ("words", "hide_specials", "hide_first", "rollout", "ablate"))
    if reading and not real:
        raise FigureUsageError(f"{reading[0]} applies to real models; a toy model's words are whole already")
    if args.colormap is not None and view not in COLOURED_VIEWS:
        raise FigureUsageError(f"--colormap colours the heatmap, steps and model view; the {view} draw each head "
                               "in its own colour")
    if args.span is not None and (view != "heatmap" or (args.matrix or "weights") != "weights"):
        raise FigureUsageError("--span chooses what the heatmap's weights' colours span; it has no effect here")
    if (args.all_heads or args.strongest is not None) and view != "arcs":
        raise FigureUsageError("--all-heads and --strongest choose the arcs' lines; add --view arcs")
    if args.strongest is not None and not 0 <= args.strongest <= 512:
        raise FigureUsageError("--strongest must be from 0 (every line) to 512")
    if args.grid is not None and (view != "heatmap" or kind not in (".png", ".svg", ".pdf")):
        raise FigureUsageError("--grid sets heatmaps side by side: use it with --view heatmap and .png, .svg or .pdf")
    if args.grid == "layers" and not real:
        raise FigureUsageError("--grid layers shows a head in every layer; a toy model has one layer: use --grid heads")
    census = _given(args, ("census_seed", "census_texts", "census_exclude_first", "census_exclude_diagonal",
                           "census_epsilon"))
    if census and args.census is None:
        raise FigureUsageError(f"{census[0]} says how the census is measured: add --census MEASURE")
    if args.census is not None and (view != "model" or not real or kind not in (".png", ".svg", ".pdf")):
        raise FigureUsageError("--census colours a real model's model view: use it with --view model and .png, "
                               ".svg or .pdf")
    if args.census is not None:
        census_from_args(args)  # an unknown measure or a bad threshold, before the model opens
    if args.theme is not None and args.transparent:
        raise FigureUsageError("--transparent is --theme transparent-light: give one of them")
    if args.dpi is not None and args.width_cm is None:
        raise FigureUsageError("--dpi sets the pixels of a print width: give --width-cm too")
    sizes = _given(args, ("image_scale", "width_px", "width_cm"))
    if len(sizes) > 1:
        raise FigureUsageError(f"{sizes[0]} and {sizes[1]} both set the size: give one of them")
    if args.width_px is not None and kind not in (".png", ".svg"):
        raise FigureUsageError(f"--width-px sets a PNG's or SVG's width, not a {kind[1:].upper()}'s")
    if args.width_cm is not None and kind not in (".png", ".svg", ".pdf"):
        raise FigureUsageError(f"--width-cm sets a print size of a PNG, SVG or PDF, not of a {kind[1:].upper()}")
    if kind == ".html" and view != "heatmap":
        raise FigureUsageError("the interactive page (.html) is the heatmap with hover: drop --view or use heatmap")
    options_from_args(args)  # sizes and themes out of range are refused here too


def census_from_args(args: argparse.Namespace) -> CensusChoice | None:
    """The census the model view is coloured by (--census and its settings), or None."""
    if args.census is None:
        return None
    if args.census not in MEASURE_KEYS:
        raise FigureUsageError(f"--census: no measure called {args.census!r}; choose from {', '.join(MEASURE_KEYS)}")
    epsilon = CensusChoice.sink_epsilon if args.census_epsilon is None else args.census_epsilon
    if not 0.0 <= epsilon < 1.0:
        raise FigureUsageError(f"--census-epsilon must be at least 0 and below 1, not {epsilon}")
    if args.census_seed is not None and args.census_seed < 0:
        raise FigureUsageError(f"--census-seed must be 0 or more, not {args.census_seed}")
    return CensusChoice(args.census, args.census_seed or 0, args.census_texts, args.census_exclude_first,
                        args.census_exclude_diagonal, float(epsilon))


def focus_from_text(text: str | None) -> Focus | None:
    """WORD or WORD:looking or WORD:looked-at (a word may itself hold a colon: the last part decides)."""
    if text is None:
        return None
    word, _, role = text.rpartition(":")
    if not word or role not in ROLE_FLAGS:
        word, role = text, "looking"
    if not word.strip():
        raise FigureUsageError("--focus needs a word, e.g. --focus sat or --focus sat:looked-at")
    return Focus(-1, ROLE_FLAGS[role], word)


def ablated_from_text(text: str | None) -> tuple[tuple[int, int], ...]:
    """"1:4,2:1" → ((0, 3), (1, 0)): layers and heads from 1 on the command line, from 0 inside."""
    if text is None:
        return ()
    pairs = []
    for part in text.split(","):
        layer, colon, head = part.strip().partition(":")
        if not colon or not layer.isdigit() or not head.isdigit() or int(layer) < 1 or int(head) < 1:
            raise FigureUsageError(f"--ablate takes LAYER:HEAD pairs counted from 1, e.g. 1:4,2:1; not {part!r}")
        pairs.append((int(layer) - 1, int(head) - 1))
    return tuple(sorted(set(pairs)))


def state_from_args(args: argparse.Namespace, *, model: str, sentence: str, real: bool,
                    options: dict | None, head: int, layer: int, step: str | None) -> ViewState:
    """What the command asks to draw (the focus still a word: the controller finds its token)."""
    view = args.view or "heatmap"
    return ViewState(model=model, sentence=sentence, view=view, real=real, options=options, layer=layer, head=head,
                     matrix=args.matrix or "weights",
                     reading={key: bool(getattr(args, key)) for key in READING_FLAGS},
                     ablated=ablated_from_text(args.ablate), focus=focus_from_text(args.focus),
                     colormap=args.colormap or COLORMAPS[0], span=args.span, step=step,
                     all_heads=view == "arcs" and (args.all_heads or args.head is None),
                     strongest=args.strongest, grid=args.grid, census=census_from_args(args))


def options_from_args(args: argparse.Namespace) -> FigureOptions:
    theme = args.theme or ("transparent-light" if args.transparent else "light")
    try:
        if args.width_cm is not None:
            size = FigureSize(width_cm=args.width_cm, dpi=args.dpi or FigureSize.dpi)
        elif args.width_px is not None:
            size = FigureSize(width_px=args.width_px)
        else:
            size = FigureSize(scale=args.image_scale or 1)
        return FigureOptions(theme=theme, caption=args.caption, title=args.title or "", size=size)
    except FigureOptionError as exc:
        raise FigureUsageError(str(exc)) from None


# --- the other way: the command that makes a figure --------------------------------------------------

def command_for(state: ViewState, options: FigureOptions, path: str) -> str:
    """The `attention-explorer export` command that draws `state` with `options` into `path`."""
    words = [PROG, "export", "--model", state.model, "--sentence", state.sentence]
    if state.target is not None:  # an encoder–decoder: --sentence is its source
        words += ["--target", state.target, "--part", state.part or PARTS[0]]
    if state.real:
        words += ["--layer", str(state.layer + 1)]
        words += [f"--{flag}" for key, flag in READING_FLAGS.items() if state.reading.get(key)]
        if state.ablated:
            words += ["--ablate", ",".join(f"{layer + 1}:{head + 1}" for layer, head in state.ablated)]
    elif state.options is not None:
        words += [f"--{flag}" if state.options[flag] else f"--no-{flag}" for flag in ("scale", "causal", "positional")]
        words += ["--heads", str(state.options["heads"])]
    words += ["--view", state.view, "--head", str(state.head + 1)]
    if state.view in ("heatmap", "arcs", "bars", "model") and state.matrix != "weights":
        words += ["--matrix", state.matrix]
    if state.view == "arcs":
        words += ["--all-heads"] if state.all_heads else []
        words += ["--strongest", str(state.strongest)] if state.strongest is not None else []
    if state.view == "steps" and state.step and not path.lower().endswith(".gif"):
        words += ["--step", state.step]
    if state.colormap != COLORMAPS[0] and state.view in COLOURED_VIEWS:
        words += ["--colormap", state.colormap]
    if state.span is not None and state.view == "heatmap" and state.matrix == "weights":
        words += ["--span", state.span]
    if state.focus is not None and state.view != "model":
        role = "" if state.focus.role == ROLES[0] else ":looked-at"
        words += ["--focus", f"{state.focus.word}{role}"]
    if state.grid is not None:
        words += ["--grid", state.grid]
    if state.census is not None and state.view == "model":
        words += _census_words(state.census)
    words += _figure_words(options, path)
    return shlex.join(words)


def _census_words(census: CensusChoice) -> list[str]:
    words = ["--census", census.measure]
    if census.texts:
        words += ["--census-texts", census.texts]
    elif census.seed:
        words += ["--census-seed", str(census.seed)]
    words += ["--census-exclude-first"] if census.exclude_first else []
    words += ["--census-exclude-diagonal"] if census.exclude_diagonal else []
    if census.sink_epsilon != CensusChoice.sink_epsilon:
        words += ["--census-epsilon", f"{census.sink_epsilon:g}"]
    return words


def _figure_words(options: FigureOptions, path: str) -> list[str]:
    words = [] if options.caption else ["--no-caption"]
    if options.title:
        words += ["--title", options.title]
    if options.theme != THEMES[0]:
        words += ["--theme", options.theme]
    size = options.size
    if size.width_cm is not None:
        words += ["--width-cm", f"{size.width_cm:g}", "--dpi", str(size.dpi)]
    elif size.width_px is not None:
        words += ["--width-px", str(size.width_px)]
    elif size.scale != 1 and path.lower().endswith((".png", ".gif")) and size.scale in SCALES:
        words += ["--image-scale", f"{size.scale:g}"]
    return [*words, "-o", path]

