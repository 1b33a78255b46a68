"""The command line's half for real pretrained models (every family of engine/pretrained/families): list
them, trace them as JSON, export a layer's matrix as CSV or a view as an image.

engine.pretrained is imported only once a real model is asked for, so `trace` and `export` on toy
models start as fast as before. Layers and heads are counted from 1 here, as on screen.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from .export import check_target, write_matrix_csv

PROG = "attention-explorer"
# A sentence where attention has something to find (what "it" refers to), when none is given.
REAL_SENTENCE = "The animal didn't cross the street because it was too tired."
TOY_ONLY_OPTIONS = ("causal", "scale", "positional", "heads")
# How a real model holds its weights: engine.pretrained.weights.WEIGHT_MODES, spelled out here so that
# building the parser does not load the real model code (a test checks that the two agree)
WEIGHT_MODES = ("auto", "float32", "stored")


class RealUsageError(Exception):
    """Arguments that do not fit a real model (the command line turns it into one line)."""


def print_real_models() -> None:
    """The known real models: where the files of each were found, or how to get them."""
    from .engine.pretrained import KNOWN_MODELS
    from .engine.pretrained.catalog import missing_model_text, model_location
    from .engine.pretrained.dependencies import INSTALL_REAL

    print()
    print("Real models (also any Hugging Face folder of a family the app knows — BERT, RoBERTa, DistilBERT, "
          "GPT-2, GPT-NeoX, Llama, Mistral, Qwen2, Qwen3, Phi-3, OLMo 2, Gemma, Gemma 2 — or a .gguf file of "
          "Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma 2, Gemma 3, Phi-3, GPT-2, GPT-NeoX, OLMo 2, BERT, RoBERTa "
          "or ModernBERT):")
    for known in KNOWN_MODELS:
        location = model_location(known)
        print(known.name)
        print(f"  found at {location}" if location else f"  {missing_model_text(known)}")
    if importlib.util.find_spec("tokenizers") is None:
        print(f"Real models need the tokenizers package: {INSTALL_REAL}")


def check_toy_options(args: argparse.Namespace) -> None:
    """Refuse the options only toy models have."""
    given = [name for name in TOY_ONLY_OPTIONS if getattr(args, name, None) is not None]
    if given:
        flags = ", ".join(f"--{name}" for name in given)
        raise RealUsageError(f"{flags} applies to the built-in toy models only; a real model has its own "
                             f"settings (use --layer and --head to choose what to see)")


def check_toy_layer(args: argparse.Namespace) -> None:
    """A toy model is one layer: --layer 1 is accepted, any other layer is an error."""
    if getattr(args, "layer", None) not in (None, 1):
        raise RealUsageError(f"a toy model has one layer, so --layer {args.layer} does not exist; drop --layer")


def add_weights_option(parser: argparse.ArgumentParser) -> None:
    """--weights, on the commands that open real models."""
    parser.add_argument("--weights", choices=WEIGHT_MODES, default="auto",
                        help="real models: float32 converts the weights at open (the fastest runs, twice a bf16 "
                             "file's size in memory); stored keeps them as the file has them (bf16, f16, GGUF "
                             "blocks) and converts a layer at a time, in about the file's size; auto (default): "
                             "float32 when that takes at most half the memory free, a decoder keeping only a "
                             "few layers converted while it reads 4,096 tokens or more")


def open_and_run(args: argparse.Namespace):
    """The real model and its forward on the sentence asked for (or REAL_SENTENCE)."""
    from .engine.pretrained import open_pretrained

    # what a panic in `tokenizers` prints is held back (tokenizing.guarded)
    model = open_pretrained(args.model, weights=args.weights)
    ptrace = model.run(real_sentence(args))
    if ptrace.encoded.cut is not None:
        print(f"{PROG}: note: the text was cut ({model.name} reads at most {model.max_tokens} tokens): "
              f"{ptrace.encoded.cut.describe()}", file=sys.stderr)
    return model, ptrace


def chosen_layer_head(args: argparse.Namespace, n_layers: int, n_heads: int,
                      name: str) -> tuple[int | None, int | None]:
    """--layer and --head as 0-based indices (None when not given), refused when out of range."""
    picked = []
    for flag, value, count in (("layer", getattr(args, "layer", None), n_layers), ("head", args.head, n_heads)):
        if value is not None and not 1 <= value <= count:
            raise RealUsageError(f"--{flag} must be between 1 and {count} for {name}")
        picked.append(None if value is None else value - 1)
    return picked[0], picked[1]


def trace_real(args: argparse.Namespace) -> int:
    """The forward as JSON: every layer's weights, or one layer's weights, q, k, v and scores."""
    from .export_pretrained import weight_count, write_pretrained_json

    check_toy_options(args)
    check_target(args.output)
    if args.target is not None:
        return trace_encoder_decoder(args)
    model, ptrace = open_and_run(args)
    layer, head = chosen_layer_head(args, model.n_layers, model.n_heads, model.name)
    if layer is None:
        count = weight_count(model, ptrace.n, heads=None if head is None else 1)
        print(f"{PROG}: note: the weights of all {model.n_layers} layers ({count:,} numbers); "
              f"--layer L writes one layer with its q, k, v and scores", file=sys.stderr)
    write_pretrained_json(args.output, model, ptrace, layer, head)
    return 0


def trace_encoder_decoder(args: argparse.Namespace) -> int:
    """An encoder–decoder on --sentence (the source) and --target as JSON: every layer's and head's
    encoder, decoder and cross attention, or those of the layer and head chosen."""
    from .engine.pretrained.encoder_decoder import open_encoder_decoder
    from .export_encoder_decoder import write_encoder_decoder_json

    model = open_encoder_decoder(args.model)
    source = real_sentence(args)
    result = model.run(source, args.target)
    encoder, decoder = model.weights.encoder.arch, model.weights.decoder.arch
    layer, head = chosen_layer_head(args, min(encoder.n_layers, decoder.n_layers),
                                    min(encoder.n_heads, decoder.n_heads), f"{model.name}'s encoder and decoder both")
    write_encoder_decoder_json(args.output, model, source, args.target, result, layer, head)
    return 0


def check_encoder_decoder_options(args: argparse.Namespace) -> bool:
    """Whether --model is an encoder–decoder (BART); --target and --part are refused for any other model,
    and --rollout for its cross-attention (as the window offers it: one stack's rollout, not two texts')."""
    from .engine.pretrained.encoder_decoder import is_encoder_decoder_folder
    from .engine.pretrained.encoder_decoder_view import CROSS

    pair = is_encoder_decoder_folder(args.model)
    if pair and args.target is not None and not args.target.strip():
        raise RealUsageError("--target is empty: give the text the decoder reads")
    given = [f"--{name}" for name in ("target", "part") if getattr(args, name, None) is not None]
    if given and not pair:
        raise RealUsageError(f"{' and '.join(given)} {'are' if len(given) > 1 else 'is'} for an encoder–decoder "
                             "(BART), which reads a source and a target; this model reads one text: drop "
                             f"{' and '.join(given)}")
    if pair and args.rollout and (args.part or CROSS) == CROSS:
        raise RealUsageError("--rollout multiplies one stack's mixes layer by layer, and cross-attention mixes two "
                             "texts: choose --part encoder or decoder to roll one of them out")
    return pair


def sized_name(model) -> str:
    """The model whose layers and heads were counted, for a message: an encoder–decoder's part named."""
    return f"the {model.part} attention of {model.name}" if model.is_encoder_decoder else model.name


def encoder_decoder_run(args: argparse.Namespace, ablated: frozenset[tuple[int, int]] = frozenset()):
    """An encoder–decoder on --sentence (the source) and --target (by default the source: BART is trained
    to write a text back), seen through --part, with these (layer, head) pairs of that part off."""
    from .engine.pretrained.encoder_decoder import open_encoder_decoder
    from .engine.pretrained.encoder_decoder_view import CROSS, EncoderDecoderPart, EncoderDecoderTrace

    model = open_encoder_decoder(args.model)
    part = EncoderDecoderPart(model, args.part or CROSS)
    bad = [(lay, h) for lay, h in ablated if lay >= part.n_layers or h >= part.n_heads]
    if bad:
        raise RealUsageError(f"{sized_name(part)} has no head {bad[0][1] + 1} in layer {bad[0][0] + 1} to switch off")
    source = real_sentence(args)
    target = source if args.target is None else args.target
    off = frozenset((part.part, lay, h) for lay, h in ablated)
    return part, EncoderDecoderTrace(model.name, source, target, model.run(source, target, off), part, off)


def export_real_csv(args: argparse.Namespace, kind: str, pair: bool = False) -> bool:
    """Check a real model's export, and write it when it is a CSV (one matrix of one layer and head:
    layer 1 and head 1 by default; an encoder–decoder's of the part chosen, its heads --ablate'd off).
    False: it is an image, for the caller to render (that needs Qt)."""
    from .figure_command import ablated_from_text

    check_toy_options(args)
    if kind == ".gif":
        raise RealUsageError("a GIF plays a toy model's steps through; write a real model's view as .png or .svg")
    check_target(args.output)
    if kind != ".csv":
        return False
    if pair:
        model, ptrace = encoder_decoder_run(args, frozenset(ablated_from_text(args.ablate)))
    else:
        model, ptrace = open_and_run(args)
    layer, head = chosen_layer_head(args, model.n_layers, model.n_heads, sized_name(model))
    write_matrix_csv(args.output, ptrace.layer_trace(layer or 0), args.matrix or "weights", head)
    return True


def real_sentence(args: argparse.Namespace) -> str:
    return REAL_SENTENCE if args.sentence is None else args.sentence
