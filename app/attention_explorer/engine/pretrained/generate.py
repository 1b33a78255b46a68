"""A decoder writes: a prompt (as it is, or put into the model's chat template) read once, then one
token at a time, each chosen from the model's scores (sampling.py) and read back in (decode.py),
until a stop token of the model, the count asked for, or a Stop.

Every step keeps what a viewer asks of it: the token, the five candidates it was chosen from with
their probabilities, and the attention of the token the model read last — the row, in every layer
and head, of the query whose scores chose it. The steps of a generation are therefore the last rows
of forwards over the prompt plus the text written so far (a test checks this to 1e-5 at every step),
without running those forwards; under a rotary scaling that follows the text's length (dynamic NTK,
longrope) past the original context, of that text as the generation read it, as transformers'
generate does (decode.py). The rows are float32, layers × heads × the length at that step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import OptionsError
from .chat import render_chat
from .decode import Decoder
from .model import PretrainedModel, hold_layers
from .progress import Progress
from .sampling import Choice, Sampling, choose, generator
from .tokenizing import Cut, Encoded

STOP_TOKEN, LENGTH, CANCELLED = "stop token", "length", "cancelled"  # why a generation ended


@dataclass(frozen=True)
class GenerationSettings:
    tokens: int = 32                                  # at most this many are written
    sampling: Sampling = field(default_factory=Sampling)
    chat: bool = False                                # the prompt put into the model's chat template
    ablate: frozenset[tuple[int, int]] = frozenset()  # (layer, head) switched off, 0-based, as in the forward

    def __post_init__(self):
        if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < 1:
            raise OptionsError(f"the number of tokens to write is a whole number from 1, not {self.tokens}")


@dataclass(frozen=True)
class Step:
    """One token written: the choice (its id and the candidates) and where the model looked to make it."""

    choice: Choice
    text: str               # what the token writes on its own (" mat")
    # (layers, heads, length) float32: the last token read, on every token up to it; None when the
    # generation keeps its reader, which makes them again (generation_trace.step_rows): 1,000 tokens
    # of SmolLM2 would keep 540 MB of them
    attention: np.ndarray | None

    @property
    def token_id(self) -> int:
        return self.choice.token_id


@dataclass
class Generation:
    model_name: str
    prompt: str                 # as given
    text: str                   # what the model read: the prompt, or the prompt in its chat template
    encoded: Encoded            # the tokens of `text` (the end of it when it was cut)
    settings: GenerationSettings
    stop_ids: tuple[int, ...]
    steps: list[Step] = field(default_factory=list)
    stopped: str = ""           # STOP_TOKEN, LENGTH or CANCELLED once it has ended
    written: str = ""           # the tokens written, as text
    # kept when asked (a window shows the text so far from them, generation_trace.py):
    reader: Decoder | None = field(default=None, repr=False)  # its cache holds every layer's input
    after_logits: np.ndarray | None = field(default=None, repr=False)  # the scores after the last token

    @property
    def prompt_ids(self) -> np.ndarray:
        return self.encoded.ids

    @property
    def cut(self) -> Cut | None:
        """The prompt was longer than the model reads: what was kept."""
        return self.encoded.cut

    @property
    def ids(self) -> np.ndarray:
        """The prompt's tokens and the ones written after it."""
        return np.concatenate([self.prompt_ids, np.array([s.token_id for s in self.steps], dtype=np.int64)])


def prompt_text(model: PretrainedModel, prompt: str, chat: bool) -> str:
    """What the model reads: `prompt`, or (chat) the user's turn of its chat template and the cue for its reply."""
    if not chat:
        return prompt
    info = model.generation
    if info.chat_template is None:
        raise OptionsError(f"{model.name}'s files carry no chat template, so it cannot be asked as a chat; "
                           f"generate from the plain prompt")
    return render_chat(info.chat_template, prompt, bos_token=info.bos_token, eos_token=info.eos_token,
                       source=f"{info.source}: the chat template")


def generate(model: PretrainedModel, prompt: str, settings: GenerationSettings = GenerationSettings(),
             progress: Progress | None = None, on_step: Callable[[Step], None] | None = None,
             keep_reader: bool = False, on_start: Callable[[Generation], None] | None = None,
             between_layers: Callable[[], None] | None = None) -> Generation:
    """Write up to `settings.tokens` tokens after `prompt`; `on_step` hears of each as it is made, and
    `on_start` is handed the generation before the prompt is read (a window watches it grow).
    `between_layers` is called once in every layer read, of the prompt and of each token: a window's
    worker waits there while the user acts on the window.

    `keep_reader`: the generation keeps its decoder (`reader`) with every layer's input, and reads
    the last token written too (`after_logits`), so a viewer can show any text so far (a window; the
    command line writes files from the steps alone).

    `progress(fraction, text)` hears of every layer of the prompt and every token. Answering False
    while the prompt is read raises Cancelled (nothing was written); while writing, it stops there
    and the generation keeps what was written (`stopped` = CANCELLED). Raises OptionsError for an
    encoder, a chat with no template, a head that does not exist or more tokens than the model's
    context leaves room for; SentenceError for a prompt with nothing to read.
    """
    if not model.is_decoder:
        raise OptionsError(f"{model.name} is an encoder: it reads a text whole and writes nothing; "
                           f"generate with a decoder (GPT-2, Llama, Qwen, Gemma, …)")
    ablate = model.checked_heads(settings.ablate)
    text = prompt_text(model, prompt, settings.chat)
    encoded = model.tokenizer.encode(text, add_specials=not settings.chat)
    room = model.max_tokens - len(encoded.ids)
    if settings.tokens > room:
        raise OptionsError(f"{model.name} reads at most {model.max_tokens:,} tokens and the prompt holds "
                           f"{len(encoded.ids):,}: " + (f"at most {room:,} more can be written, not "
                                                        f"{settings.tokens:,}" if room > 0 else "shorten it"))
    stop_ids = model.generation.stop_ids
    result = Generation(model.name, prompt, text, encoded, settings, stop_ids)
    hold_layers(model.weights, every_layer=True)  # each token written reads every layer
    decoder = Decoder(model, ablate, len(encoded.ids) + settings.tokens, keep_inputs=keep_reader,
                      between_layers=between_layers)
    if keep_reader:
        result.reader = decoder
    if on_start is not None:
        on_start(result)
    share = 1 / (settings.tokens + 1)  # of the progress bar, for reading the prompt

    def reading(fraction: float, what: str):
        return progress(fraction * share, f"reading the prompt: {what}")

    rng = generator(settings.sampling)
    with np.errstate(all="ignore"):  # the scores are checked; NumPy's warnings add nothing
        logits, rows = decoder.prefill(encoded.ids, encoded.special, None if progress is None else reading)
    while True:
        choice = choose(logits, settings.sampling, rng)
        step = Step(choice, model.tokenizer.token_text(choice.token_id), None if keep_reader else rows)
        result.steps.append(step)
        if on_step is not None:
            on_step(step)
        count = len(result.steps)
        if choice.token_id in stop_ids or count == settings.tokens:
            result.stopped = STOP_TOKEN if choice.token_id in stop_ids else LENGTH
            break
        if progress is not None and progress(share + (1 - share) * count / settings.tokens,
                                             f"token {count + 1} of {settings.tokens}") is False:
            result.stopped = CANCELLED
            break
        with np.errstate(all="ignore"):
            logits, rows = decoder.step(choice.token_id)
    if keep_reader and decoder.length < decoder.most:
        with np.errstate(all="ignore"):
            result.after_logits, _ = decoder.step(result.steps[-1].token_id)
    if keep_reader:
        decoder.stop_reading()  # the texts so far need only the layer inputs
    result.written = model.tokenizer.decode([s.token_id for s in result.steps])
    return result
