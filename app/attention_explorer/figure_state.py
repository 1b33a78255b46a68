"""What a figure shows, as data: the view state that every exported file carries and a view file holds.

A ViewState names the model (and the hash of its files), the text (an encoder–decoder's source, with
its target and the attention shown), the toy model's options or the real model's layer, reading and
switched-off heads, the head and matrix shown, the pinned word and the colours: everything needed to
draw the same picture again, in the window or from the command line.
No Qt here: the command line and the file readers use it without loading a GUI library.

Files that carry a state come from anywhere, so `state_from_dict` reads one as untrusted input: every
field is checked for its type and its bounds, and anything wrong raises one FigureStateError naming
the field. Layers and heads are counted from 1 in the file, as on screen and on the command line.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .engine.census.measures import MEASURE_KEYS
from .engine.limits import max_text_chars
from .engine.trace import SQUARE_MATRICES
from .figure_census import CensusChoice

FORMAT_NAME = "attention-explorer-view"
FORMAT_VERSION = 1

VIEWS = ("heatmap", "arcs", "bars", "steps", "model")
COLOURED_VIEWS = ("heatmap", "steps", "model")  # the views a colour map colours (the arcs and bars: head colours)
# The heatmap's colour spans: 0–1, the shown data's range, each row over its largest (as the window's)
SPANS = ("fixed", "data", "row")
# Perceptually uniform colour maps offered for the heatmap (all ship with pyqtgraph); views.theme uses these
COLORMAPS = ("viridis", "cividis", "magma", "inferno", "plasma")
ROLES = ("looking", "looked_at")
GRIDS = ("heads", "layers")  # small multiples: every head of the layer, or the head across every layer
READING_FLAGS = ("words", "hide_specials", "hide_first", "rollout")
TOY_OPTION_FLAGS = ("scale", "causal", "positional")
# An encoder–decoder's attentions, as engine/pretrained/encoder_decoder_view names them (that module loads
# with the real models, not with the command line): cross-attention first, the one it opens on
PARTS = ("cross", "encoder", "decoder")

MAX_SOURCE_CHARS = 4096   # a model's name or path
MAX_INDEX = 100_000       # layers, heads, tokens: far beyond any model the app opens
MAX_ABLATED = 4096
MAX_WORD_CHARS = 200


class FigureStateError(ValueError):
    """A view state that cannot be used; the message names the field and says what is wrong."""


@dataclass(frozen=True)
class Focus:
    """The pinned word: its place, its role (the word looking or the one looked at) and its label."""

    index: int
    role: str = "looking"
    word: str = ""


@dataclass(frozen=True)
class ViewState:
    """One view of one computation. `layer` and `head` are 0-based here (1-based in the file)."""

    model: str                           # a built-in name, a list name of a real model, or a path
    sentence: str
    view: str = "heatmap"
    real: bool = False
    model_sha256: str = ""               # of the model's file(s); of the toy model's own JSON for toy models
    toy_model: dict | None = None        # a toy model's JSON, edits included, when it is not a built-in one
    options: dict | None = None          # toy models: scale, causal, positional, heads
    layer: int = 0
    head: int = 0
    matrix: str = "weights"
    reading: dict = field(default_factory=lambda: dict.fromkeys(READING_FLAGS, False))
    ablated: tuple[tuple[int, int], ...] = ()
    focus: Focus | None = None
    colormap: str = COLORMAPS[0]
    span: str | None = None              # None: as the heatmap chooses for the text's length
    step: str | None = None              # the steps view: where it stands (None: the finished computation)
    all_heads: bool = True               # the arcs: every head, or the selected one alone
    strongest: int | None = None         # the arcs: the strongest lines kept per word (0: all; None: as
                                         # the arcs choose for the text's length)
    grid: str | None = None              # small multiples (see GRIDS)
    census: CensusChoice | None = None   # the model view: its cells coloured by this census measure
    target: str | None = None            # an encoder–decoder: the text its decoder reads (`sentence`: the source)
    part: str | None = None              # an encoder–decoder: the attention shown (see PARTS)

    def to_dict(self) -> dict:
        data = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "view": self.view,
                "model": {"source": self.model, "kind": "real" if self.real else "toy", "sha256": self.model_sha256},
                "sentence": self.sentence}
        if self.toy_model is not None:
            data["model"]["toy"] = self.toy_model
        if self.options is not None:
            data["options"] = dict(self.options)
        data.update(layer=self.layer + 1, head=self.head + 1, matrix=self.matrix, reading=dict(self.reading),
                    ablated=[[layer + 1, head + 1] for layer, head in self.ablated],
                    focus=None if self.focus is None else asdict(self.focus), colormap=self.colormap,
                    span=self.span, step=self.step, arcs={"all_heads": self.all_heads, "strongest": self.strongest},
                    grid=self.grid)
        if self.census is not None:
            data["census"] = asdict(self.census)
        if self.target is not None:
            data.update(target=self.target, part=self.part or PARTS[0])
        return data


def state_from_dict(data: object) -> ViewState:
    """Read a view state written by to_dict (or by anyone): checked field by field."""
    if not isinstance(data, dict):
        raise FigureStateError("a view state is a JSON object")
    if data.get("format") != FORMAT_NAME:
        raise FigureStateError(f"format: expected {FORMAT_NAME!r}")
    version = data.get("version")
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise FigureStateError(f"version: {version!r} is not one this app reads (it reads {FORMAT_VERSION})")
    model = _object(data, "model")
    kind = _choice(model, "kind", ("toy", "real"), "model.")
    real = kind == "real"
    toy = model.get("toy")
    if toy is not None and not isinstance(toy, dict):
        raise FigureStateError("model.toy: must be a model object")
    sha = model.get("sha256", "")
    if not isinstance(sha, str) or (sha and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha))):
        raise FigureStateError("model.sha256: must be 64 hexadecimal digits")
    focus = data.get("focus")
    return ViewState(
        model=_text(model, "source", MAX_SOURCE_CHARS, "model.", empty=False),
        sentence=_text(data, "sentence", max_text_chars(real)),
        view=_choice(data, "view", VIEWS),
        real=real,
        model_sha256=sha,
        toy_model=None if real else toy,
        options=None if real else _toy_options(data.get("options")),
        layer=_count(data, "layer") - 1,
        head=_count(data, "head") - 1,
        matrix=_choice(data, "matrix", SQUARE_MATRICES, default="weights"),
        reading=_reading(data.get("reading", {})),
        ablated=_ablated(data.get("ablated", [])),
        focus=None if focus is None else _focus(focus),
        colormap=_choice(data, "colormap", COLORMAPS, default=COLORMAPS[0]),
        span=_choice(data, "span", SPANS, default=None),
        step=_optional_text(data, "step", 32),
        all_heads=_flag(_object(data, "arcs", {}), "all_heads", True, "arcs."),
        strongest=None if _object(data, "arcs", {}).get("strongest") is None
        else _number(_object(data, "arcs", {}), "strongest", 0, 512, None, "arcs."),
        grid=_choice(data, "grid", GRIDS, default=None),
        census=None if data.get("census") is None else _census(data["census"]),
        target=_optional_text(data, "target", max_text_chars(True)) if real else None,
        part=_choice(data, "part", PARTS, default=PARTS[0]) if real and data.get("target") is not None else None,
    )


# --- field readers: each raises FigureStateError naming its field ----------------------------------

def _census(value: object) -> CensusChoice:
    if not isinstance(value, dict):
        raise FigureStateError("census: must be an object (measure, seed, texts, …)")
    epsilon = value.get("sink_epsilon", CensusChoice.sink_epsilon)
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0.0 <= epsilon < 1.0:
        raise FigureStateError("census.sink_epsilon: must be a number at least 0 and below 1")
    texts = value.get("texts")
    if texts is not None and (not isinstance(texts, str) or not texts or len(texts) > MAX_SOURCE_CHARS):
        raise FigureStateError("census.texts: must be the path of a text file, or null")
    return CensusChoice(measure=_choice(value, "measure", MEASURE_KEYS, "census."),
                        seed=_number(value, "seed", 0, 2 ** 31 - 1, 0, "census."), texts=texts,
                        exclude_first=_flag(value, "exclude_first", False, "census."),
                        exclude_diagonal=_flag(value, "exclude_diagonal", False, "census."),
                        sink_epsilon=float(epsilon))


def _object(data: dict, key: str, default: dict | None = None) -> dict:
    value = data.get(key, default)
    if not isinstance(value, dict):
        raise FigureStateError(f"{key}: must be an object")
    return value


def _text(data: dict, key: str, limit: int, prefix: str = "", *, empty: bool = True) -> str:
    value = data.get(key)
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise FigureStateError(f"{prefix}{key}: must be a{'' if empty else ' non-empty'} text")
    if len(value) > limit or "\0" in value:
        raise FigureStateError(f"{prefix}{key}: longer than {limit:,} characters or holding a null character")
    return value


def _optional_text(data: dict, key: str, limit: int) -> str | None:
    return None if data.get(key) is None else _text(data, key, limit)


def _choice(data: dict, key: str, choices: tuple, prefix: str = "", default: object = ...) -> object:
    if key not in data and default is not ...:
        return default
    value = data.get(key)
    if value is None and default is None:
        return None
    if value not in choices or isinstance(value, bool):
        raise FigureStateError(f"{prefix}{key}: {value!r} is not one of {', '.join(map(str, choices))}")
    return value


def _number(data: dict, key: str, low: int, high: int, default: int | None = None, prefix: str = "") -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise FigureStateError(f"{prefix}{key}: must be a whole number from {low} to {high:,}")
    return value


def _count(data: dict, key: str) -> int:
    return _number(data, key, 1, MAX_INDEX, 1)


def _flag(data: dict, key: str, default: bool, prefix: str = "") -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise FigureStateError(f"{prefix}{key}: must be true or false")
    return value


def _toy_options(value: object) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise FigureStateError("options: must be an object")
    options = {name: _flag(value, name, False, "options.") for name in TOY_OPTION_FLAGS}
    options["heads"] = _number(value, "heads", 1, 512, 1, "options.")
    return options


def _reading(value: object) -> dict:
    if not isinstance(value, dict):
        raise FigureStateError("reading: must be an object")
    return {name: _flag(value, name, False, "reading.") for name in READING_FLAGS}


def _ablated(value: object) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list) or len(value) > MAX_ABLATED:
        raise FigureStateError(f"ablated: must be a list of at most {MAX_ABLATED:,} [layer, head] pairs")
    pairs = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2
                or any(isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= MAX_INDEX for x in item)):
            raise FigureStateError("ablated: each entry must be [layer, head], counted from 1")
        pairs.append((item[0] - 1, item[1] - 1))
    return tuple(sorted(set(pairs)))


def _focus(value: object) -> Focus:
    if not isinstance(value, dict):
        raise FigureStateError("focus: must be an object or null")
    return Focus(index=_number(value, "index", 0, MAX_INDEX, None, "focus."),
                 role=_choice(value, "role", ROLES, "focus.", default="looking"),
                 word=_text(value, "word", MAX_WORD_CHARS, "focus.") if "word" in value else "")
