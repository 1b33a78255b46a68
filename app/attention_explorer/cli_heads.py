"""`attention-explorer heads`: the head census on the command line.

    attention-explorer heads --model M [--part encoder|decoder|cross] [--texts FILE] [--measure induction|
                             previous|duplicate|sink|clark|entropy|cross|all] [--seed S] [--ablate-top K]
                             -o heads.csv|heads.json|-

Every head of the model (a real one or a toy one) is measured over the built-in battery or the
user's texts, and written one row per head (CSV) or in full with the ranked lists and each head's
best example (JSON); `-o -` writes to standard output (CSV unless --format json). Progress and the
top heads go to stderr. `--ablate-top K` switches off the K top heads of a measure (decoders) and
says what that does to the next-token loss. Results are kept in the app's data folder, keyed by the
model's files, the texts and the settings, so a second run answers at once (--no-cache: neither
read nor write it). Layers and heads count from 1 here, as on screen.

An encoder–decoder (a BART folder) is measured one attention at a time, as the window shows one:
`--part cross` (the default, as the window opens it) its cross-attention, `--part encoder` or
`--part decoder` its encoder's or decoder's self-attention; each text is read as both source and
target. A measure that does not apply to the part's heads (those within one text, on cross-attention;
cross-attention's own, on self-attention) is not measured and stderr says why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli_real import RealUsageError, add_weights_option

PROG = "attention-explorer"
FORMATS = ("csv", "json")
MEASURE_GROUPS = ("induction", "previous", "duplicate", "sink", "clark", "entropy", "cross")
PARTS = ("encoder", "decoder", "cross")


class HeadsUsageError(RealUsageError):
    """Arguments of `heads` that do not fit together (one line on stderr, exit 2)."""


def add_heads_command(commands) -> None:
    """The `heads` subcommand's arguments, on the parser's subcommands."""
    heads = commands.add_parser("heads", help="the head census: what every head does, measured over many texts")
    heads.add_argument("--model", required=True, metavar="NAME_OR_FILE",
                       help="a real model (its name in `models`, an HF folder, a .gguf file) or a toy model")
    add_weights_option(heads)
    heads.add_argument("--part", choices=PARTS, default=None,
                       help="an encoder–decoder's attention to measure: its encoder's or decoder's self-attention, "
                            "or cross-attention (the default)")
    heads.add_argument("--texts", default=None, metavar="FILE",
                       help="a UTF-8 text file, one text per line or paragraphs (default: the built-in battery)")
    heads.add_argument("--split", choices=("auto", "lines", "paragraphs"), default="auto",
                       help="how --texts is split into texts (default: auto)")
    heads.add_argument("--measure", action="append", choices=(*MEASURE_GROUPS, "all"), default=None,
                       help="what to measure; repeat it for several (default: all)")
    heads.add_argument("--seed", type=int, default=0, help="seed of the battery's random sequences (default 0)")
    heads.add_argument("--exclude-first", action="store_true",
                       help="pattern scores without the weight on the first token (TransformerLens's exclude_bos)")
    heads.add_argument("--exclude-diagonal", action="store_true",
                       help="pattern scores without each token's weight on itself")
    heads.add_argument("--sink-epsilon", type=float, default=0.3, metavar="E",
                       help="a head sinks when the first token's mean weight is above E (default 0.3, Gu et al.)")
    heads.add_argument("--top", type=int, default=3, metavar="N", help="top heads said on stderr (default 3)")
    heads.add_argument("--ablate-top", type=int, default=None, metavar="K",
                       help="decoders: switch off the K top heads and report the next-token loss")
    heads.add_argument("--ablate-by", default=None, metavar="MEASURE",
                       help="the measure whose top heads --ablate-top switches off (default: induction on the "
                            "repeated sequences, else the first measured)")
    heads.add_argument("--no-cache", action="store_true", help="neither use nor keep a cached result")
    heads.add_argument("--format", choices=FORMATS, default=None, help="for -o -: csv (default) or json")
    heads.add_argument("-o", "--output", required=True, metavar="FILE",
                       help="heads.csv or heads.json; - writes to standard output")


class StderrProgress:
    """Progress on stderr, a line every tenth of the way, so a log stays short."""

    def __init__(self, what: str):
        self.what, self.shown = what, -1

    def __call__(self, fraction: float, text: str) -> bool:
        step = int(fraction * 10)
        if step != self.shown:
            self.shown = step
            print(f"{PROG}: {self.what} {step * 10:3d}% ({text})", file=sys.stderr, flush=True)
        return True


def _output_format(args: argparse.Namespace) -> str:
    from .export import STDOUT

    if args.output == STDOUT:
        return args.format or "csv"
    suffix = Path(args.output).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise HeadsUsageError(f"cannot tell the format of {args.output!r}: end it in .csv or .json (or use -o -)")
    if args.format is not None and args.format != suffix:
        raise HeadsUsageError(f"--format {args.format} does not match {args.output!r}; drop --format")
    return suffix


def _subject(model_name: str, weights: str, part: str | None):
    """The census subject of `model_name`: one part of an encoder–decoder (cross-attention unless
    `part` says otherwise), a real model or a toy one; `part` for any but an encoder–decoder is an error."""
    from . import engine
    from .engine.census import subject_for

    real = engine.catalog.is_pretrained_source(model_name)
    if real:
        from .engine.pretrained.encoder_decoder import is_encoder_decoder_folder, open_encoder_decoder

        if is_encoder_decoder_folder(model_name):
            from .engine.pretrained.encoder_decoder_view import CROSS, EncoderDecoderPart

            return subject_for(EncoderDecoderPart(open_encoder_decoder(model_name), part or CROSS))
    if part is not None:
        raise HeadsUsageError(f"--part chooses an encoder–decoder's attention; {model_name} has one kind: drop --part")
    if real:
        from .engine.pretrained import open_pretrained

        return subject_for(open_pretrained(model_name, weights=weights))
    return subject_for(engine.resolve_model(model_name))


def _ablation_measure(args: argparse.Namespace, result) -> str:
    from .engine.census import MEASURE_KEYS

    if args.ablate_by is not None:
        if args.ablate_by not in result.measures:
            choices = ", ".join(result.measures) if args.ablate_by in MEASURE_KEYS else ", ".join(MEASURE_KEYS)
            raise HeadsUsageError(f"--ablate-by {args.ablate_by!r} is not among the measures; choose {choices}")
        return args.ablate_by
    for measure in ("induction_stripe", *result.measures):
        if measure in result.measures and result.ranked(measure, 1):
            return measure
    return result.measures[0]


def cmd_heads(args: argparse.Namespace) -> int:
    from .engine.census import (
        CensusCache,
        CensusSettings,
        ablation_effect,
        builtin_battery,
        cached_census,
        census_csv,
        census_json,
        default_cache_folder,
        keys_of,
        read_texts_file,
        summary_lines,
    )
    from .export import check_target, write_text

    fmt = _output_format(args)
    if args.top < 0:
        raise HeadsUsageError(f"--top must be 0 or more, got {args.top}")
    if args.ablate_top is not None and args.ablate_top < 1:
        raise HeadsUsageError(f"--ablate-top must be 1 or more, got {args.ablate_top}")
    settings = CensusSettings(keys_of(args.measure or ["all"]), args.exclude_first, args.exclude_diagonal,
                              args.sink_epsilon, args.seed)
    check_target(args.output)                       # a bad path fails before any forward
    source_file = None if args.texts is None else read_texts_file(args.texts, args.split)  # and a bad file
    subject = _subject(args.model, args.weights, args.part)
    if args.ablate_top is not None and not subject.has_loss:
        raise HeadsUsageError(f"--ablate-top reads the next-token loss, which only decoders have; "
                              f"{subject.name} has none")
    source = source_file or builtin_battery(subject, args.seed)
    print(f"{PROG}: {subject.name}, {subject.n_layers} layers × {subject.n_heads} heads; {source.label}",
          file=sys.stderr)
    cache = None if args.no_cache else CensusCache(default_cache_folder())
    census = cached_census(subject, source, settings, cache, StderrProgress("census"))
    result = census.result
    if census.from_cache:
        print(f"{PROG}: note: from the cache of an earlier run ({cache.folder}); --no-cache runs it again",
              file=sys.stderr)
    if census.cache_note:
        print(f"{PROG}: note: {census.cache_note}", file=sys.stderr)
    ablation = None
    if args.ablate_top is not None:
        measure = _ablation_measure(args, result)
        effect = ablation_effect(subject, result, measure, args.ablate_top, source, args.seed,
                                 progress=StderrProgress("heads switched off"))
        ablation = effect.to_dict()
        for line in effect.lines():
            print(f"{PROG}: {line}", file=sys.stderr)
    for line in summary_lines(result, args.top) if args.top else ():
        print(f"{PROG}: {line}", file=sys.stderr)
    write_text(args.output, census_csv(result) if fmt == "csv" else census_json(result, ablation))
    return 0
