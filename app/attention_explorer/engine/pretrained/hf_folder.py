"""Reading a Hugging Face folder: config.json + *.safetensors (+ tokenizer.json, read elsewhere).

Which family the folder holds is config.json's `model_type` (families/); that family's module reads
the config's fields into the Architecture and the tensors into the shared weights.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ..errors import ModelError
from ..limits import MAX_CONFIG_VALUES
from ..safe_read import parse_json, read_user_text
from .families import Family, family_of
from .fields import Fields, shown
from .progress import Progress, report
from .safetensors_reader import SafetensorsFile, open_safetensors
from .weights import Architecture, ModelWeights, TensorSource, choose_mode, may_remake_layers

_OWN_FILE = "put the model's own {} there"  # what to do when a file of the folder is a pipe, a folder...


def read_config(folder: Path) -> dict:
    path = folder / "config.json"
    if not os.path.lexists(path):
        raise ModelError(f"{folder}: no config.json; a model folder needs config.json, *.safetensors and "
                         f"tokenizer.json")
    # the toy models' reader: a regular file of bounded size and nesting, never a FIFO or a device
    text = read_user_text(path, "config.json", error=ModelError, advice=_OWN_FILE.format("config.json"))
    config = parse_json(text, "config.json", "config.json", max_values=MAX_CONFIG_VALUES, error=ModelError)
    if not isinstance(config, dict):
        raise ModelError("config.json: not a JSON object")
    return config


def architecture_from_config(config: dict) -> Architecture:
    """The sizes and switches of the model, every field of config.json it uses type- and range-checked."""
    family = family_of(config)
    _refuse_variants(config, family)
    fields = Fields(config, "config.json")
    fields.flag("tie_word_embeddings", default=True)
    return family.architecture(fields)


# Switches that change the computation and that the forward pass does not implement, whatever the
# family: field → the value it must have (absent counts as that value). Each family adds its own
# (Llama's and Mistral's `mlp_bias`, which ModernBERT's feed-forward has).
_PLAIN = {"position_embedding_type": "absolute", "scale_attn_by_inverse_layer_idx": False,
          "reorder_and_upcast_attn": False}


def _refuse_variants(config: dict, family: Family) -> None:
    for name, plain in {**_PLAIN, **family.plain}.items():
        value = config.get(name)
        if value is not None and (type(value) is not type(plain) or value != plain):  # 0 is not False here
            raise ModelError(f"config.json: {name!r} is {shown(value)}; only {plain!r} is supported")


def read_hf_folder(folder: Path, progress: Progress | None = None, weights: str = "auto") -> ModelWeights:
    """The weights of the model in `folder`, checked against its config.json; `weights` says whether
    they are converted to float32 now or kept stored (weights.choose_mode)."""
    folder = Path(folder)
    config = read_config(folder)
    family = family_of(config)
    arch = architecture_from_config(config)
    mode = choose_mode(arch, "config.json", weights)
    with folder_tensors(folder, family.tensor_name, progress, mode == "stored", rows_kept=not arch.is_decoder,
                        remade=may_remake_layers(arch, weights, mode)) as source:
        layers_field = Fields(config, "").name_of("num_hidden_layers", "n_layer", "n_layers")
        source.check_layer_count(family.layer_pattern, arch.n_layers, f"config.json ('{layers_field}')")
        model = family.weights(arch, source, progress)
    tied = config.get("tie_word_embeddings", family.tied_by_default)
    if arch.is_decoder and model.lm_head is None and tied is False:
        said = ("says the embeddings are not tied to the output" if "tie_word_embeddings" in config else
                f"does not tie the embeddings to the output (a {family.title} model has its own unless it says so)")
        raise ModelError(f"{source.file_name}: tensor {family.output_name!r} is missing and config.json {said}")
    return model


@contextmanager
def folder_tensors(folder: Path, tensor_name: Callable[[str], str], progress: Progress | None = None,
                   stored: bool = False, rows_kept: bool = False, remade: bool = False) -> Iterator[TensorSource]:
    """The tensors of every *.safetensors file of `folder`, each under `tensor_name(its name in the file)`,
    open for the block (`stored`, `rows_kept` or `remade`: for as long as the source lives; TensorSource
    says what each keeps in the file): every header is checked before any tensor is read."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        raise ModelError(f"{folder}: no *.safetensors file (only the safetensors format is read)")
    with ExitStack() as stack:
        report(progress, 0.1, f"checking {files[0].name}" if len(files) == 1 else f"checking {len(files)} files")
        shards = [stack.enter_context(open_safetensors(path)) for path in files]
        if stored or rows_kept or remade:
            for shard in shards:
                shard.keep_open()
        yield _tensor_source(shards, tensor_name, folder, stored, rows_kept, remade)


def _tensor_source(shards: list[SafetensorsFile], tensor_name: Callable[[str], str], folder: Path,
                   stored: bool, rows_kept: bool, remade: bool) -> TensorSource:
    """One index over every shard, under the names the builders use; a tensor in two shards is refused."""
    where: dict[str, tuple[SafetensorsFile, str]] = {}
    for shard in shards:
        for original in shard.entries:
            name = tensor_name(original)
            if name in where:
                raise ModelError(f"{shard.name}: tensor {original!r} is also in {where[name][0].name}; a tensor "
                                 f"belongs in one file of the folder")
            where[name] = (shard, original)
    file_name = shards[0].name if len(shards) == 1 else f"{folder.name}/*.safetensors"
    return TensorSource(file_name, {name: shard.entries[original].shape for name, (shard, original) in where.items()},
                        lambda name: where[name][0].read(where[name][1]), stored=stored,
                        rows=lambda name, start, stop: where[name][0].read_rows(where[name][1], start, stop),
                        rows_kept=rows_kept,
                        transposed_into=lambda name, target: where[name][0].read_transposed(where[name][1], target),
                        remade=remade)
