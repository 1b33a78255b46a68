"""What a decoder's files say about writing text: the tokens that end it and its chat template.

transformers' `generate` stops at the ids of generation_config.json's `eos_token_id`, or config.json's
when there is no generation_config.json (one id or a list); a GGUF file names its end in
`tokenizer.ggml.eos_token_id`. The chat template is tokenizer_config.json's `chat_template` (or the
chat_template.jinja beside it, as newer transformers save it), a GGUF's `tokenizer.chat_template`.
Every field is type- and range-checked like the rest of a model's metadata (fields.py): a stop id
that is no token of the model is a ModelError naming the file, not a generation that never stops.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelError
from ..limits import MAX_CONFIG_VALUES
from ..safe_read import parse_json, read_user_text
from .chat import MAX_TEMPLATE_CHARS
from .fields import Fields, shown


@dataclass(frozen=True)
class GenerationInfo:
    stop_ids: tuple[int, ...] = ()   # a generation ends after writing one of these
    chat_template: str | None = None  # Jinja, None when the files carry none
    bos_token: str = ""              # the texts a template may write for them
    eos_token: str = ""
    source: str = ""                 # the file the template came from, for messages
    forced_bos: int | None = None    # an encoder–decoder's first token written (forced_bos_token_id), if any
    forced_eos: int | None = None    # and the last one a count allows (forced_eos_token_id)


def gguf_generation_info(metadata: dict, file_name: str, tokens: list[str]) -> GenerationInfo:
    """The stop token and chat template in a GGUF file's metadata."""
    meta = Fields(metadata, file_name, "metadata field")
    eos = _token_ids(meta, "tokenizer.ggml.eos_token_id", len(tokens))
    bos = _token_ids(meta, "tokenizer.ggml.bos_token_id", len(tokens))
    template = meta.raw("tokenizer.chat_template", default=None)
    if template is not None:
        template = meta.text("tokenizer.chat_template")
    return GenerationInfo(eos, template, tokens[bos[0]] if bos else "", tokens[eos[0]] if eos else "", file_name)


def folder_generation_info(folder: Path, vocab_size: int, token_id) -> GenerationInfo:
    """The stop ids and chat template of a Hugging Face folder; `token_id(text)` finds a token named
    by its text (tokenizer_config.json names its specials so)."""
    generation = _optional_json(folder / "generation_config.json")
    config = _optional_json(folder / "config.json")

    def ids(name: str) -> tuple[int, ...]:  # generation_config.json's when it says, else config.json's
        if generation is not None and generation.get(name) is not None:
            return _token_ids(Fields(generation, "generation_config.json"), name, vocab_size)
        return _token_ids(Fields(config or {}, "config.json"), name, vocab_size)

    stop = ids("eos_token_id")
    tokenizer_config = _optional_json(folder / "tokenizer_config.json") or {}
    fields = Fields(tokenizer_config, "tokenizer_config.json")
    bos, eos = (_token_text(fields, name) for name in ("bos_token", "eos_token"))
    if not stop and eos and (found := token_id(eos)) is not None:
        stop = (found,)
    template, source = _template(folder, fields)
    forced_bos, forced_eos = (next(iter(ids(name)), None) for name in ("forced_bos_token_id", "forced_eos_token_id"))
    return GenerationInfo(stop, template, bos, eos, source, forced_bos, forced_eos)


def _token_ids(fields: Fields, name: str, vocab_size: int) -> tuple[int, ...]:
    """One id or a list of them, each a token of the model (absent: none)."""
    value = fields.raw(name, default=None)
    values = value if isinstance(value, list) else [] if value is None else [value]
    for item in values:
        if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < vocab_size:
            raise fields.wrong((name,), f"must be token ids (whole numbers below {vocab_size:,})", value)
    return tuple(dict.fromkeys(values))


def _token_text(fields: Fields, name: str) -> str:
    """A special token's text, given as it is or as {"content": text}."""
    value = fields.raw(name, default="")
    if isinstance(value, dict):
        value = value.get("content", "")
    if not isinstance(value, str):
        raise fields.wrong((name,), "must be a token's text", value)
    return value


def _template(folder: Path, fields: Fields) -> tuple[str | None, str]:
    jinja = folder / "chat_template.jinja"
    if os.path.lexists(jinja):
        return read_user_text(jinja, "chat template", max_bytes=MAX_TEMPLATE_CHARS * 4, error=ModelError,
                              advice="put the model's own chat_template.jinja there"), jinja.name
    value = fields.raw("chat_template", default=None)
    if isinstance(value, list):  # several named templates: the one named "default"
        value = next((t.get("template") for t in value if isinstance(t, dict) and t.get("name") == "default"), None)
    if value is not None and not isinstance(value, str):
        raise fields.wrong(("chat_template",), "must be a template's text", shown(value))
    return value, "tokenizer_config.json"


def _optional_json(path: Path) -> dict | None:
    if not os.path.lexists(path):
        return None
    text = read_user_text(path, path.name, error=ModelError, advice=f"put the model's own {path.name} there")
    value = parse_json(text, path.name, path.name, max_values=MAX_CONFIG_VALUES, error=ModelError)
    if not isinstance(value, dict):
        raise ModelError(f"{path.name}: not a JSON object")
    return value
