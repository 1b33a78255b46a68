"""`attention-explorer generate`: a real decoder writes after a prompt, token by token, and every step
is written out — its token, the five candidates it was chosen from, and where it looked — or drawn.

    attention-explorer generate --model M --prompt TEXT [--tokens N] [--temperature T] [--top-k K]
        [--top-p P] [--seed S] [--chat] [--ablate L:H,...] [--layer L] [--head K]
        [--span fixed|data|row] [--image-scale 1|2|4] -o gen.json|gen.csv|gen.png|gen.svg|gen.gif|-

JSON and CSV are the numbers (export_generation); PNG, SVG and GIF are the picture of one layer and
head, a row per step over every token read, the GIF writing it row by row (generation_figure; layer 1,
head 1 unless --layer and --head say otherwise). Layers and heads count from 1, as on screen. The
settings are checked before the model is opened, so a mistake costs no wait; each is one line on
stderr and exit status 2. A picture too large at its --image-scale for the tokens asked is refused once
the prompt is read, before the model writes. Progress goes to stderr only when it is a terminal.

An encoder–decoder (a BART folder) writes a target for the prompt as its source: greedily, as JSON
(the source's tokens, each token written and the text); the other settings, CSV and pictures are
refused in one line each (its steps' attention is not recorded yet).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from .cli_real import RealUsageError, add_weights_option, chosen_layer_head

PROG = "attention-explorer"
DATA_FORMATS = (".json", ".csv")
PICTURE_FORMATS = (".png", ".svg", ".gif")
FORMATS = (*DATA_FORMATS, *PICTURE_FORMATS)


class GenerateUsageError(RealUsageError):
    """Arguments of `generate` that cannot be used (one line on stderr, exit 2)."""


def add_generate_command(commands) -> None:
    """The `generate` subcommand's arguments, on the parser's subcommands."""
    from .export import IMAGE_SCALES
    from .figure_state import SPANS

    gen = commands.add_parser("generate", help="a real decoder writes after a prompt, token by token: each token, "
                                               "its five candidates and its attention, as JSON or CSV, or drawn "
                                               "as PNG, SVG or an animated GIF")
    gen.add_argument("--model", required=True, metavar="NAME_OR_FILE",
                     help="a real decoder: its name in `models`, an HF folder of a decoder (GPT-2, Llama, Qwen, "
                          "Gemma, …), or a .gguf file of Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma 2, Gemma 3, Phi-3, "
                          "GPT-2, GPT-NeoX or OLMo 2")
    gen.add_argument("--prompt", required=True, metavar="TEXT", help="the text to continue")
    add_weights_option(gen)
    gen.add_argument("--tokens", type=int, default=32, metavar="N",
                     help="write at most N tokens (default 32); it stops sooner at the model's stop token")
    gen.add_argument("--temperature", type=float, default=0.0, metavar="T",
                     help="0 (default): greedy, the likeliest token each time; above 0: drawn, the scores ÷ T")
    gen.add_argument("--top-k", type=int, default=None, metavar="K", help="draw from the K likeliest tokens only")
    gen.add_argument("--top-p", type=float, default=None, metavar="P",
                     help="draw from the likeliest tokens until their probabilities reach P (0 < P ≤ 1)")
    gen.add_argument("--seed", type=int, default=None, metavar="S",
                     help="seed of the draw (default 0): the same seed writes the same text again")
    gen.add_argument("--chat", action="store_true",
                     help="put the prompt into the model's chat template (when its files carry one)")
    gen.add_argument("--ablate", default=None, metavar="L:H[,L:H…]", help="switch these heads off while writing")
    gen.add_argument("--layer", type=int, default=None, metavar="L",
                     help="JSON: the attention rows of this layer only (default: every layer); a picture: the "
                          "layer drawn (default: 1)")
    gen.add_argument("--head", type=int, default=None, metavar="K",
                     help="JSON: the attention rows of this head only (default: every head); a picture: the head "
                          "drawn (default: 1)")
    gen.add_argument("--span", choices=SPANS, default=None,
                     help="a picture: what the weights' colours span: fixed (0–1), data (the weights drawn), row "
                          "(each row's own); default: fixed, or row past 16 tokens read, as the heatmap")
    gen.add_argument("--image-scale", type=int, choices=IMAGE_SCALES, default=None,
                     help="pixel scale of a PNG or GIF (default 1)")
    gen.add_argument("-o", "--output", required=True, metavar="FILE",
                     help="gen.json (the prompt, settings, every step's token, candidates and attention rows of "
                          "every layer and head, or those chosen), gen.csv (a row per step: token, probability, "
                          "candidates), or a picture of one layer and head: gen.png, gen.svg, or gen.gif (the "
                          "steps written one after another); a row per step, labelled by its token and "
                          "probability, over the prompt's tokens and then those written; - writes the JSON to "
                          "standard output")


def _format(output: str) -> str:
    from .export import STDOUT

    if output == STDOUT:
        return ".json"
    suffix = Path(output).suffix.lower()
    if suffix not in FORMATS:
        raise GenerateUsageError(f"cannot write a generation to {output!r}: end it in .json or .csv (the "
                                 f"numbers), .png, .svg or .gif (a picture), or give -o - for JSON on standard "
                                 f"output")
    return suffix


def _check_output_options(args: argparse.Namespace, kind: str) -> None:
    """Refuse options that would change nothing in this kind of file."""
    if kind == ".csv" and (args.layer is not None or args.head is not None):
        raise GenerateUsageError("--layer and --head choose the attention rows of a JSON file or the head of a "
                                 "picture; a CSV holds the tokens only: drop them or write .json, .png, .svg or .gif")
    if kind in DATA_FORMATS and args.span is not None:
        raise GenerateUsageError(f"--span colours a picture; a {kind[1:].upper()} holds numbers: drop it or write "
                                 f".png, .svg or .gif")
    if args.image_scale is not None and kind not in (".png", ".gif"):
        what = "an SVG is drawn as vectors, at any size" if kind == ".svg" else f"a {kind[1:].upper()} holds numbers"
        raise GenerateUsageError(f"--image-scale applies to PNG and GIF images; {what}: drop it")


def _settings(args: argparse.Namespace):
    """The generation's settings from the arguments, refused in one line when they cannot be used."""
    from .engine.errors import OptionsError
    from .engine.pretrained.generate import GenerationSettings
    from .engine.pretrained.sampling import Sampling
    from .figure_command import ablated_from_text

    if not args.prompt.strip():
        raise GenerateUsageError("--prompt is empty: give the text to continue")
    if args.tokens < 1:
        raise GenerateUsageError(f"--tokens must be 1 or more, not {args.tokens}")
    drawn = {"--top-k": args.top_k, "--top-p": args.top_p, "--seed": args.seed}
    unused = [flag for flag, value in drawn.items() if value is not None]
    if args.temperature == 0 and unused:
        raise GenerateUsageError(f"{', '.join(unused)} {'shapes' if len(unused) == 1 else 'shape'} a draw, and "
                                 f"--temperature 0 (the default) is greedy: add --temperature, e.g. 0.8")
    try:
        sampling = Sampling(args.temperature, args.top_k or 0, 1.0 if args.top_p is None else args.top_p,
                            args.seed or 0)
        return GenerationSettings(args.tokens, sampling, args.chat, frozenset(ablated_from_text(args.ablate)))
    except OptionsError as exc:
        raise GenerateUsageError(str(exc)) from None


def _check_model_name(name: str) -> None:
    from . import engine

    if engine.catalog.is_pretrained_source(name):
        return
    if name in engine.builtin_model_names() or Path(name).suffix.lower() == ".json":
        raise GenerateUsageError(f"{name!r} is a toy model, which has no words to write; generate with a real "
                                 f"decoder (SmolLM2-135M (decoder), an HF folder of a decoder such as GPT-2, Llama, "
                                 f"Qwen or Gemma, or a .gguf file)")
    if not os.path.lexists(name):  # said, and ended (exit 1), as every other command says what it cannot find
        raise engine.ModelError(engine.catalog.unknown_model_text(name))


def cmd_generate(args: argparse.Namespace, pictures: Callable[[], ModuleType]) -> int:
    """Write the generation `args` ask for; `pictures()` gives the module that draws one (generation_figure),
    handed over by cli.py so that this module, loaded by every command, leads to no Qt."""
    from .cli_heads import StderrProgress
    from .engine.errors import OptionsError
    from .engine.pretrained import open_pretrained
    from .engine.pretrained.encoder_decoder import is_encoder_decoder_folder
    from .engine.pretrained.generate import STOP_TOKEN, generate
    from .export import check_target
    from .export_generation import write_generation_csv, write_generation_json

    kind = _format(args.output)
    _check_output_options(args, kind)
    settings = _settings(args)
    _check_model_name(args.model)
    if is_encoder_decoder_folder(args.model):
        return _write_target(args, kind, settings)
    check_target(args.output)  # a bad path fails before the model is opened
    model = open_pretrained(args.model, weights=args.weights)
    if not model.is_decoder:
        raise GenerateUsageError(f"{model.name} is an encoder: it reads a text whole and writes nothing; "
                                 f"generate with a decoder (GPT-2, Llama, Qwen, Gemma, …)")
    layer, head = chosen_layer_head(args, model.n_layers, model.n_heads, model.name)
    if kind in (".png", ".gif"):
        _check_picture_size(model, args, settings, pictures().check_size)
    progress = StderrProgress("generating") if sys.stderr.isatty() else None
    try:
        generation = generate(model, args.prompt, settings, progress)
    except OptionsError as exc:  # heads, the chat template, room in the context: what was asked does not fit
        raise GenerateUsageError(str(exc)) from None
    if generation.cut is not None:
        print(f"{PROG}: note: the prompt was cut ({model.name} reads at most {model.max_tokens} tokens): "
              f"{generation.cut.describe()}", file=sys.stderr)
    if generation.stopped == STOP_TOKEN and len(generation.steps) < settings.tokens:
        print(f"{PROG}: note: stopped at the model's stop token after {len(generation.steps)} of "
              f"{settings.tokens} tokens", file=sys.stderr)
    if kind in PICTURE_FORMATS:
        pictures().write_generation_figure(args.output, model, generation, layer or 0, head or 0,
                                           args.image_scale or 1, span=args.span)
    elif kind == ".csv":
        write_generation_csv(args.output, model, generation)
    else:
        layers = range(model.n_layers) if layer is None else (layer,)
        heads = range(model.n_heads) if head is None else (head,)
        write_generation_json(args.output, model, generation, layers, heads)
    return 0


def _write_target(args: argparse.Namespace, kind: str, settings) -> int:
    """An encoder–decoder writes a target for the prompt (its source) into a JSON file: greedy or drawn as
    asked, every head on (--ablate names no part of it)."""
    from .cli_heads import StderrProgress
    from .engine.errors import OptionsError
    from .engine.pretrained.encoder_decoder import open_encoder_decoder
    from .engine.pretrained.encoder_decoder_write import write_target
    from .export import check_target
    from .export_encoder_decoder import write_target_generation_json

    if kind != ".json":
        raise GenerateUsageError("an encoder–decoder's writing is written as JSON (-o gen.json or -o -); CSV and "
                                 "pictures of its steps are not made yet")
    refused = [flag for flag, used in (("--chat", settings.chat), ("--ablate", bool(settings.ablate))) if used]
    if refused:
        raise GenerateUsageError(f"an encoder–decoder writes here with every head on and no chat template: drop "
                                 f"{', '.join(refused)}")
    check_target(args.output)
    model = open_encoder_decoder(args.model)
    layer, head = chosen_layer_head(args, model.weights.decoder.arch.n_layers, model.weights.decoder.arch.n_heads,
                                    f"{model.name}'s decoder")
    progress = StderrProgress("writing") if sys.stderr.isatty() else None
    try:
        generation = write_target(model, args.prompt, settings, progress=progress)
    except OptionsError as exc:
        raise GenerateUsageError(str(exc)) from None
    write_target_generation_json(args.output, model, generation, layer, head)
    return 0


def _check_picture_size(model, args: argparse.Namespace, settings, check_size) -> None:
    """A PNG or GIF that would be too large at its scale if every token asked for were written, refused
    before the model writes (the prompt is read for its length: a chat template lengthens it);
    `check_size(prompt_tokens, tokens, scale)` is generation_figure's."""
    from .engine.errors import OptionsError
    from .engine.pretrained.generate import prompt_text
    from .export import ExportError

    try:
        prompt = len(model.tokenizer.encode(prompt_text(model, args.prompt, settings.chat),
                                            add_specials=not settings.chat).ids)
    except OptionsError as exc:
        raise GenerateUsageError(str(exc)) from None
    try:
        check_size(prompt, settings.tokens, args.image_scale or 1)
    except ExportError as exc:
        raise GenerateUsageError(str(exc)) from None
