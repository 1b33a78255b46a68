"""The `attention-explorer` command: the window by default, headless subcommands for scripts.

    attention-explorer [--model NAME_OR_FILE] [--sentence TEXT]     open the window
    attention-explorer models                                       list the built-in and real models
    attention-explorer trace [options] [-o FILE.json]               the whole trace as JSON
    attention-explorer export [options] ... -o FILE.csv|png|svg|pdf|html|gif  one matrix or one figure
    attention-explorer generate --model M --prompt TEXT [...] -o FILE.json|csv|png|svg|gif  a decoder writes

A real model (its list name, an HF folder or a .gguf file: see cli_real) takes --layer and --head
instead of the toy models' --causal, --scale, --positional and --heads.
    attention-explorer scaling [--dk 64 --keys 10 ...] [-o FILE]    why √d_k: random-score statistics

`-o -` writes the JSON or CSV to standard output. Every failure ends in one line on stderr and a
non-zero exit, never a traceback. Qt is loaded only to render an image or to open the window, so the
data commands start about as fast as Python with NumPy.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from . import __version__, engine
from .cli_generate import add_generate_command, cmd_generate
from .cli_heads import add_heads_command, cmd_heads
from .cli_real import (
    RealUsageError,
    add_weights_option,
    check_encoder_decoder_options,
    check_toy_layer,
    export_real_csv,
    print_real_models,
    real_sentence,
    trace_real,
)
from .engine import SQUARE_MATRICES, EngineError, Options, ToyModel, Trace
from .export import (
    IMAGE_SCALES,
    MATRIX_CHOICES,
    STDOUT,
    ExportError,
    check_target,
    write_matrix_csv,
    write_text,
    write_trace_json,
)
from .figure_command import READING_FLAGS, FigureUsageError, add_figure_arguments, check_figure_args, state_from_args
from .figure_state import PARTS, VIEWS

PROG = "attention-explorer"
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
IMAGE_SUFFIXES = (".png", ".svg", ".pdf", ".html", ".gif")


class UsageError(Exception):
    """Bad command-line arguments."""


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr (no usage block)."""

    def error(self, message: str):  # noqa: D102 - argparse API
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="See and touch the self-attention layer of the Transformer.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--model", dest="gui_model", metavar="NAME_OR_FILE",
                        help="open the window on this model (a built-in name or a model file)")
    parser.add_argument("--sentence", dest="gui_sentence", metavar="TEXT", help="open the window on this sentence")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    commands.add_parser("models", help="list the built-in models and the real ones")

    trace = commands.add_parser("trace", help="write every intermediate of the computation as JSON")
    _add_computation_options(trace)
    trace.add_argument("--head", type=int, default=None, metavar="K",
                       help="real models: only this head, counting from 1")
    trace.add_argument("--target", default=None, metavar="TEXT",
                       help="an encoder–decoder (BART): the text its decoder reads, --sentence being the source; "
                            "the JSON holds its encoder, decoder and cross attention")
    trace.add_argument("-o", "--output", default=STDOUT, metavar="FILE.json",
                       help="write here instead of standard output (-)")

    export = commands.add_parser("export", help="write one matrix (CSV) or one figure (PNG, SVG, PDF, HTML, GIF)")
    _add_computation_options(export)
    export.add_argument("--view", choices=VIEWS, default=None,
                        help="the view to draw (default: heatmap); bars: the focused word's weights; model: a real "
                             "model's layers × heads")
    export.add_argument("--matrix", choices=MATRIX_CHOICES, default=None,
                        help="the matrix to write as CSV or show in the heatmap (default: weights)")
    export.add_argument("--head", type=int, default=None, metavar="K", help="which head, counting from 1")
    export.add_argument("--target", default=None, metavar="TEXT",
                        help="an encoder–decoder (BART): the text its decoder reads, --sentence being the source "
                             "(default: the source itself)")
    export.add_argument("--part", choices=PARTS, default=None,
                        help="an encoder–decoder: the attention shown, as the window's Attention box: cross "
                             "(default: each target token reads the source), encoder (self-attention over the "
                             "source) or decoder (causal self-attention over the target)")
    export.add_argument("--step", default=None, metavar="KEY",
                        help="where a PNG or SVG of the steps view stands: embed, q, kv, rope, scores, scaled, masked, "
                             "softmax, output, concat or w_o (default: the last step that runs)")
    export.add_argument("--image-scale", type=int, choices=IMAGE_SCALES, default=None,
                        help="pixel scale of a PNG or GIF (default 1)")
    export.add_argument("--transparent", action="store_true", help="PNG with a transparent background")
    add_figure_arguments(export)
    export.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="FILE.csv, .png, .svg, .pdf, .html (interactive) or .gif (the steps played); "
                             "- writes the CSV to standard output")

    scaling = commands.add_parser("scaling", help="why divide by √d_k: statistics of random scores as JSON")
    scaling.add_argument("--dk", type=int, default=64, help="dimension d_k of queries and keys, 1 to 1024 (default 64)")
    scaling.add_argument("--keys", type=int, default=10, help="keys per query (default 10)")
    scaling.add_argument("--trials", type=int, default=400, help="random queries to average over (default 400)")
    scaling.add_argument("--seed", type=int, default=0, help="seed of the random numbers, 0 or more (default 0)")
    scaling.add_argument("-o", "--output", default=STDOUT, metavar="FILE.json",
                         help="write here instead of standard output (-)")
    add_heads_command(commands)
    add_generate_command(commands)
    return parser


def _add_computation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=engine.catalog.DEFAULT_MODEL, metavar="NAME_OR_FILE",
                        help="a built-in model name or a model file; or a real model: its name in `models`, an HF "
                             "folder or a .gguf file (default: %(default)s)")
    parser.add_argument("--sentence", default=None, metavar="TEXT", help="default: the model's own sentence")
    parser.add_argument("--layer", type=int, default=None, metavar="L",
                        help="real models: the layer, counting from 1 (trace: all layers' weights without it; "
                             "one layer adds q, k, v and scores. export: layer 1 without it)")
    for flag, what in (("causal", "the causal mask"), ("scale", "scaling by √d_k"),
                       ("positional", "sinusoidal positional encoding")):
        parser.add_argument(f"--{flag}", action=argparse.BooleanOptionalAction, default=None,
                            help=f"switch {what} on or off (default: the model's)")
    parser.add_argument("--heads", type=int, default=None, metavar="N", help="number of heads (default: the model's)")
    add_weights_option(parser)


def computation_inputs(args: argparse.Namespace) -> tuple[ToyModel, str, Options]:
    """The model, sentence and options asked for; what was left out takes the model's defaults."""
    model = engine.resolve_model(args.model)
    chosen = {name: getattr(args, name) for name in ("scale", "causal", "positional", "heads")}
    options = model.default_options.with_changes(**{k: v for k, v in chosen.items() if v is not None})
    sentence = model.default_sentence if args.sentence is None else args.sentence
    return model, sentence, options


def check_sentence(sentence: str | None) -> None:
    """Refuse a sentence holding bytes that are not UTF-8 (Python hands them over as lone surrogates)."""
    if sentence is None:
        return
    try:
        sentence.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(f"the sentence is not valid UTF-8 text: a stray byte at character {exc.start + 1}") from None


def cmd_models(_args: argparse.Namespace) -> int:
    print("Built-in toy models:")
    for name in engine.builtin_model_names():
        model = engine.load_builtin(name)
        opts = model.default_options
        print(f"{name}")
        print(f"  {model.description}")
        print(f"  features ({model.d_model}): {', '.join(model.features)}")
        print(f"  words: {len(model.vocabulary)}; d_proj = {model.d_proj}; heads = {opts.heads}; "
              f"scale = {_on(opts.scale)}; causal mask = {_on(opts.causal)}; positional = {_on(opts.positional)}")
        print(f"  default sentence: {model.default_sentence!r}")
    print_real_models()
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    check_sentence(args.sentence)
    check_sentence(args.target)
    if engine.catalog.is_pretrained_source(args.model):
        return trace_real(args)
    if args.target is not None:
        raise UsageError("--target is the text an encoder–decoder's decoder reads; a toy model reads one sentence")
    check_toy_layer(args)
    if args.head is not None:
        raise UsageError("--head chooses a head of a real model's trace; a toy model's trace holds every head")
    check_target(args.output)
    trace = engine.run(*computation_inputs(args))
    _warn_unknown(trace)
    write_trace_json(args.output, trace)
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    check_sentence(args.sentence)
    check_sentence(args.target)
    kind = _export_kind(args)
    real = engine.catalog.is_pretrained_source(args.model)
    check_figure_args(args, kind, real)
    if real:
        return _export_real(args, kind)
    if args.target is not None or args.part is not None:
        flag = "--target" if args.target is not None else "--part"
        raise UsageError(f"{flag} is for an encoder–decoder (BART), which reads a source and a target; a toy "
                         f"model reads one sentence: drop {flag}")
    check_toy_layer(args)
    if args.view == "model":
        raise UsageError("the model view shows a real model's layers and heads; a toy model has one layer: "
                         "choose --view heatmap, arcs or steps")
    check_target(args.output)  # a bad path fails now, not after rendering
    model, sentence, options = computation_inputs(args)
    trace = engine.run(model, sentence, options)  # refuses bad input before any window is built
    _warn_unknown(trace)
    if args.head is not None and not 1 <= args.head <= len(trace.heads):
        raise UsageError(f"--head must be between 1 and {len(trace.heads)} for this model and options")
    head = None if args.head is None else args.head - 1
    if kind == ".csv":
        write_matrix_csv(args.output, trace, args.matrix or "weights", head)
        return 0
    from .figure_cli import export_figure  # Qt, pyqtgraph and the views load only for figures
    from .model_hash import text_sha256

    state = state_from_args(args, model=args.model, sentence=sentence, real=False, options=options.to_dict(),
                            head=head or 0, layer=0, step=args.step)
    return export_figure(args, replace(state, model_sha256=text_sha256(engine.model.model_to_json(model))))


def _export_real(args: argparse.Namespace, kind: str) -> int:
    """A real model's layer and head: a CSV at once, a figure through the window's own views."""
    from .figure_cli import export_figure, export_read_csv

    pair = check_encoder_decoder_options(args)
    if kind == ".csv" and (args.ablate or any(getattr(args, key) for key in READING_FLAGS)):
        return export_read_csv(args, pair)
    if export_real_csv(args, kind, pair):
        return 0
    sentence = real_sentence(args)
    state = state_from_args(args, model=args.model, sentence=sentence, real=True, options=None,
                            head=0, layer=0, step=args.step)
    if pair:  # BART's target is by default its source: the text it is trained to write back
        state = replace(state, target=sentence if args.target is None else args.target, part=args.part or PARTS[0])
    return export_figure(args, state)  # the layer and head are checked once the model is open


def _step(args: argparse.Namespace) -> int | None:
    """--step as an index into the step registry, which is imported only for it (10 ms of every start)."""
    if args.step is None:
        return None
    from .engine.steps import STEP_KEYS, step_index

    if args.step not in STEP_KEYS:
        raise UsageError(f"--step {args.step!r} is not a step; choose one of {', '.join(STEP_KEYS)}")
    return step_index(args.step)


def _export_kind(args: argparse.Namespace) -> str:
    """.csv, .png, .svg or .gif, after refusing options that would have no effect on that output."""
    if args.output == STDOUT:
        if args.view is not None:
            raise UsageError("standard output (-o -) takes the CSV of one matrix; write a view to FILE.png, "
                             ".svg or .gif")
        kind = ".csv"
    else:
        kind = Path(args.output).suffix.lower()
    if kind not in (".csv", *IMAGE_SUFFIXES):
        raise UsageError(f"cannot tell the format of {args.output!r}: end it in .csv, .png, .svg, .pdf, .html or .gif")
    if kind == ".csv" and args.view is not None:
        raise UsageError("a CSV holds one matrix: drop --view, or write FILE.png/.svg for a view")
    if args.image_scale is not None and kind not in (".png", ".gif"):
        raise UsageError(f"--image-scale applies to PNG and GIF images, not to {kind[1:].upper()}")
    if args.transparent and kind != ".png":
        raise UsageError(f"--transparent applies to PNG images, not to {kind[1:].upper()}")
    view = args.view or "heatmap"
    if args.step is not None and (view != "steps" or kind not in (".png", ".svg", ".pdf")):
        raise UsageError("--step chooses where a PNG or SVG of --view steps stands (or a PDF); a GIF plays every step")
    _step(args)  # an unknown step is refused before anything is computed
    if kind in IMAGE_SUFFIXES and args.matrix is not None:
        if view in ("arcs", "bars", "model") and args.matrix not in ("weights", "norm"):
            subject = {"arcs": "the arcs show", "bars": "the bars show", "model": "the model view shows"}[view]
            raise UsageError(f"{subject} weights, or weight × moved norm (--matrix norm), not {args.matrix}")
        if view not in ("heatmap", "arcs", "bars", "model"):
            raise UsageError(f"--matrix chooses what the heatmap, arcs, bars and model view show; the {view} view "
                             "has no such choice")
        if args.matrix not in SQUARE_MATRICES:
            raise UsageError(f"the heatmap shows {', '.join(SQUARE_MATRICES)}; write {args.matrix} as .csv")
    return kind


def _cmd_generate(args: argparse.Namespace) -> int:
    check_sentence(args.prompt)  # here: cli_generate importing cli would reach the window's imports
    return cmd_generate(args, _generation_pictures)


def _generation_pictures():
    """What draws a generation (PNG, SVG, GIF): Qt loads here, only when a picture is asked for."""
    from . import generation_figure

    return generation_figure


def cmd_scaling(args: argparse.Namespace) -> int:
    """Spread, mean top weight and slope of random scores, raw, ÷√d_k and ÷d_k, as JSON."""
    import json

    from .engine import lesson_scaling

    limits = {"dk": (lesson_scaling.MIN_DK, lesson_scaling.MAX_DK), "keys": (1, lesson_scaling.MAX_KEYS),
              "trials": (1, lesson_scaling.MAX_TRIALS)}
    for name, (low, high) in limits.items():
        value = getattr(args, name)
        if not low <= value <= high:
            raise UsageError(f"--{name} must be between {low} and {high}, got {value}")
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {args.seed}")
    check_target(args.output)
    result = engine.scaling_experiment(args.dk, args.keys, args.trials, args.seed)
    write_text(args.output, json.dumps(result.to_dict(), indent=2) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            check_sentence(args.gui_sentence)
            from .gc_policy import pause_for_start

            pause_for_start()  # no cycle collection while Qt loads and the window builds (run_window resumes it)
            from .application import run_window  # Qt widgets load only for the window

            # the process's own command line (argv None) is the program's: it ends as the window closes
            return run_window(model=args.gui_model, sentence=args.gui_sentence, ends_process=argv is None)
        handler = {"models": cmd_models, "trace": cmd_trace, "export": cmd_export,
                   "scaling": cmd_scaling, "heads": cmd_heads, "generate": _cmd_generate}[args.command]
        return handler(args)
    except (UsageError, RealUsageError, FigureUsageError) as exc:
        return _fail(str(exc), EXIT_USAGE)
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except (EngineError, ExportError, OSError) as exc:
        return _fail(str(exc), EXIT_FAILURE)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except RecursionError:
        return _fail("the input is nested too deeply to read", EXIT_FAILURE)
    except MemoryError:
        return _fail("not enough memory for this input", EXIT_FAILURE)
    except Exception as exc:  # noqa: BLE001 - the promise is one line, whatever went wrong
        return _fail(f"unexpected error ({type(exc).__name__}: {exc}); please report it", EXIT_FAILURE)


def _fail(message: str, code: int) -> int:
    """One line on stderr, whatever the message held."""
    print(f"{PROG}: {' '.join(message.split())}", file=sys.stderr)
    return code


def _quiet_broken_pipe() -> int:
    """`attention-explorer trace | head`: the reader left early; that is not an error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


def _warn_unknown(trace: Trace) -> None:
    if trace.unknown:
        print(f"{PROG}: note: not in the model's vocabulary, left out: {', '.join(trace.unknown)}", file=sys.stderr)


def _on(flag: bool) -> str:
    return "on" if flag else "off"
