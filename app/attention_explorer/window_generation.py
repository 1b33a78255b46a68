"""Export ▸ a generation from the window: the Save dialog (in the folder last used for generations, on a
name made of the model and the prompt's first words), then the file, or one message saying why not.

JSON holds every step's token, candidates and attention rows: of every layer and head while that is
at most ALL_ROWS_CELLS numbers, else of the layer shown (and the status bar says so). CSV holds the
tokens. PNG, SVG and GIF draw the attention rows of the layer and head shown.
"""

from __future__ import annotations

import re
from pathlib import Path

from PySide6 import QtWidgets

from .export import ExportError

SUFFIXES = (".json", ".csv", ".png", ".svg", ".gif")
FIGURE_SUFFIXES = (".png", ".svg", ".gif")
ALL_ROWS_CELLS = 5_000_000  # numbers in a JSON of every layer's and head's rows (~60 MB of text)


def stem_of(model_name: str, prompt: str) -> str:
    """"SmolLM2-135M-the-capital-of-france-is": the model and the prompt's first words, safe in a file name."""
    words = re.findall(r"\w+", prompt.lower())[:5]
    name = re.sub(r"[^\w.-]+", "-", model_name.split(" (")[0]).strip("-")
    return "-".join([name or "model", *words]) or "generation"


def export_generation(window) -> None:
    """Ask where, then write the generation shown in `window` (a MainWindow); a failure is one message."""
    from .export_files import ask_save_path

    controller = window.controller
    generation, model = controller.generation, controller.real_model
    if generation is None or model is None or controller.generating:
        return
    path = ask_save_path(window, window.settings, "generation", stem_of(model.name, generation.prompt), SUFFIXES,
                         ".json", title="Export the generation")
    if path is None:
        return
    if Path(path).suffix.lower() not in SUFFIXES:
        path += ".json"
    try:
        note = write_generation_file(path, model, generation, controller.layer, controller.head)
    except ExportError as exc:
        QtWidgets.QMessageBox.warning(window, "Export failed", f"{exc}\n\nNothing was written.")
        return
    window.statusBar().showMessage(f"Exported {Path(path).name}{note}", 8000)


def write_generation_file(path: str, model, generation, layer: int, head: int) -> str:
    """Write `generation` to `path` by its ending; returns a note for the status bar ("" or what was left out)."""
    from .export_generation import write_generation_csv, write_generation_json

    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        write_generation_csv(path, model, generation)
        return ""
    if suffix in FIGURE_SUFFIXES:
        from .generation_figure import write_generation_figure

        write_generation_figure(path, model, generation, layer, head)
        return ""
    prompt, count = len(generation.prompt_ids), len(generation.steps)
    cells = model.n_layers * model.n_heads * (prompt * count + count * (count - 1) // 2)  # step i reads prompt + i
    if cells <= ALL_ROWS_CELLS:
        write_generation_json(path, model, generation, range(model.n_layers), range(model.n_heads))
        return ""
    write_generation_json(path, model, generation, (layer,), range(model.n_heads))
    return f" (the attention rows of layer {layer + 1} only: every layer's would be {cells:,} numbers)"
