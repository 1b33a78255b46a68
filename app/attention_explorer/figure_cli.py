"""The command line's figures: `attention-explorer export` opens the state it was asked for in a
controller and draws it through the same code as the window's Export dialog, so a figure and its
command-line twin are the same picture. Qt loads only here, when a figure is drawn; a real model's
CSV read as words or with heads off stays without it.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from .cli_real import PROG, check_toy_options, chosen_layer_head, encoder_decoder_run, open_and_run, sized_name
from .export import check_target, write_matrix_csv
from .figure_command import FigureUsageError, ablated_from_text, options_from_args
from .figure_state import ViewState


def export_figure(args: argparse.Namespace, state: ViewState) -> int:
    """Draw `state` into args.output with the figure options of `args`; 0 once written."""
    from .figure_controller import apply_view, capture_state, controller_for_state
    from .figure_files import write_figure
    from .headless import destroy_now, ensure_application, real_controller
    from .model_hash import source_sha256

    options = options_from_args(args)
    check_target(args.output)
    ensure_application()
    if state.real:
        controller = real_controller(state.model, state.sentence, target=state.target, part=state.part)
        try:
            model = controller.real_model
            layer, head = chosen_layer_head(args, model.n_layers, model.n_heads, sized_name(model))
            state = replace(state, layer=layer or 0, head=head or 0, model_sha256=source_sha256(state.model))
            apply_view(controller, state)
            if controller.pretrained_trace.encoded.truncated:
                _note(f"the text was cut at {model.max_tokens} tokens, {model.name}'s longest")
        except BaseException:
            destroy_now(controller)
            raise
    else:
        controller, notes = controller_for_state(state)
        for note in notes:
            _note(note)
    try:
        drawn = capture_state(controller, state.view, span=state.span, all_heads=state.all_heads,
                              strongest=state.strongest, grid=state.grid, census=state.census)
        write_figure(controller, drawn, options, args.output)
    finally:
        destroy_now(controller)
    return 0


def export_read_csv(args: argparse.Namespace, pair: bool = False) -> int:
    """A real model's matrix as CSV read as the window reads it (words, hidden tokens, rollout) and with
    heads switched off: the same numbers the heatmap shows; `pair`: an encoder–decoder's part (--part)."""
    from .pretrained_display import RealView, shown_trace

    check_toy_options(args)
    check_target(args.output)
    ablated = frozenset(ablated_from_text(args.ablate))
    if pair:  # its heads are switched off as it runs
        model, ptrace = encoder_decoder_run(args, ablated)
    else:
        model, ptrace = open_and_run(args)
        bad = [(lay, h) for lay, h in ablated if lay >= model.n_layers or h >= model.n_heads]
        if bad:
            raise FigureUsageError(f"{model.name} has no head {bad[0][1] + 1} in layer {bad[0][0] + 1} to switch off")
        if ablated:
            ptrace = model.run(ptrace.text, ablated)
    layer, head = chosen_layer_head(args, model.n_layers, model.n_heads, sized_name(model))
    reading = RealView(merge_words=args.words, hide_specials=args.hide_specials, hide_first=args.hide_first,
                       rollout=args.rollout)
    trace, _note_text = shown_trace(ptrace, layer or 0, reading)
    write_matrix_csv(args.output, trace, args.matrix or "weights", head)
    return 0


def _note(text: str) -> None:
    print(f"{PROG}: note: {text}", file=sys.stderr)
