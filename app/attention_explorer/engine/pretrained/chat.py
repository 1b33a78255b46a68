"""A prompt as a chat: the user's text put into the model's own chat template, when its files carry one
(tokenizer_config.json's "chat_template" in a Hugging Face folder, "tokenizer.chat_template" in a GGUF).

Templates are Jinja, rendered as transformers renders them (`apply_chat_template`): a sandbox that
cannot touch the machine, blocks and lines trimmed, loop controls, `raise_exception` and
`strftime_now`, and `tojson` that leaves non-ASCII text as it is. The parity test compares the two.
"""

from __future__ import annotations

import json
from datetime import datetime

from ..errors import ModelError

MAX_TEMPLATE_CHARS = 200_000  # the largest templates of common models are a few thousand characters


def render_chat(template: str, prompt: str, *, bos_token: str = "", eos_token: str = "",
                source: str = "the model's chat template") -> str:
    """`prompt` as the user's one message, followed by the template's cue for the assistant's reply."""
    import jinja2  # only for a chat
    import jinja2.ext  # loopcontrols: `import jinja2` alone does not load it
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    if len(template) > MAX_TEMPLATE_CHARS:
        raise ModelError(f"{source} is {len(template):,} characters long; at most {MAX_TEMPLATE_CHARS:,} are read")

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                extensions=[jinja2.ext.loopcontrols])
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = lambda format: datetime.now().strftime(format)
    try:
        return environment.from_string(template).render(
            messages=[{"role": "user", "content": prompt}], add_generation_prompt=True,
            bos_token=bos_token, eos_token=eos_token)
    except (jinja2.exceptions.TemplateError, TypeError, ValueError, KeyError, AttributeError,
            RecursionError) as exc:
        raise ModelError(f"{source} cannot be used: {exc}") from None
