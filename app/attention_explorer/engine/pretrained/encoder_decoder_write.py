"""An encoder–decoder (BART) writes a target for a source: the source read once by the encoder, then the
decoder one token at a time from decoder_start_token_id, each chosen from its scores (sampling.py:
greedy, or drawn with a temperature, top-k and top-p from a seed) and read back in, until a stop
token (generation_config.json's or config.json's eos_token_id), the count asked for, or a Stop.

The decoder reads each token it writes alone: its self-attention keys and values go into a cache
(kv_cache.py) that the next token reads, and each layer's cross-attention keys and values are made
once from the encoder's last hidden states, since every target token reads the same source; so a
step costs one token's work, as the one-text decoders' (decode.py, whose one-query attention it
reuses), and the rest of each layer is encoder_decoder.py's own. Each step keeps the new token's
row of self-attention (on the target read so far) and of cross-attention (on the source) in every
layer and head: the last rows of encoder_decoder.run's on the source and the target read so far
(a test checks this to 1e-5), so a viewer can say which source words each written word read.

As transformers' `generate` does for these models, the files' forced tokens apply: the first token
written is forced_bos_token_id when they name one, and the last one the count allows is
forced_eos_token_id. A forced token is marked; its candidates are still the model's own. Beams and
n-gram blocking (which some BART configurations ask for) are not done: this is one greedy or drawn
path, transformers' with num_beams=1 and no_repeat_ngram_size=0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import OptionsError
from .decode import attend_newest
from .encoder_decoder import EncoderDecoderModel, decoder_layer_after_self, encode, source_keys
from .forward import embed, output_logits, project
from .generate import CANCELLED, LENGTH, STOP_TOKEN, GenerationSettings
from .kv_cache import KVCache
from .model import overflow_error
from .progress import Progress
from .sampling import Choice, choose, generator, softmax
from .tokenizing import Encoded

Heads = frozenset[tuple[str, int, int]]  # (part, layer, head) switched off, as encoder_decoder.run takes them


@dataclass(frozen=True)
class TargetStep:
    """One target token written, and where the decoder looked as it read the token before it."""

    choice: Choice
    text: str                    # what the token writes on its own
    forced: bool                 # the files forced it (forced_bos / forced_eos), whatever the scores said
    self_attention: np.ndarray   # (layers, heads, tokens read so far): the token read last, on the target
    cross_attention: np.ndarray  # (layers, heads, n_source): the token read last, on the source

    @property
    def token_id(self) -> int:
        return self.choice.token_id


@dataclass
class TargetGeneration:
    model_name: str
    source_text: str    # as given
    source: Encoded     # its tokens
    settings: GenerationSettings
    stop_ids: tuple[int, ...]
    decoder_start: int
    off: Heads = frozenset()
    steps: list[TargetStep] = field(default_factory=list)
    stopped: str = ""   # STOP_TOKEN, LENGTH or CANCELLED once it has ended
    written: str = ""   # the tokens written, as text (specials left out)

    @property
    def ids(self) -> np.ndarray:
        """The tokens written, a stop token last when it stopped on one."""
        return np.array([s.token_id for s in self.steps], dtype=np.int64)

    @property
    def read_ids(self) -> np.ndarray:
        """What the decoder read: decoder_start_token_id, then every token written but the last."""
        return np.array([self.decoder_start, *self.ids[:-1]], dtype=np.int64)


class _TargetReader:
    """The decoder part-way through its target: the keys and values of the tokens it read, the source's."""

    def __init__(self, model: EncoderDecoderModel, memory: np.ndarray, off: Heads, most: int):
        self.weights, self.off = model.weights, off
        arch = self.weights.decoder.arch
        self.sources = [source_keys(self.weights, layer, memory) for layer in range(arch.n_layers)]
        self.cache = KVCache(arch, most, most)
        self.self_off = [[h for part, at, h in off if (part, at) == ("decoder", layer)]
                         for layer in range(arch.n_layers)]
        self.length = 0

    def read(self, token: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Read `token` at the next place: the scores of the token after it (vocab), and its rows of
        self-attention (layers, heads, tokens read) and of cross-attention (layers, heads, n_source)."""
        side, at = self.weights.decoder, self.length
        arch = side.arch
        h = embed(side, np.array([token], dtype=np.int64), at)
        own, read = [], []
        for index, layer in enumerate(side.layers):
            p = project(arch, layer, h, None)
            self.cache.write(index, at, p.k, p.v)
            outputs, weights = attend_newest(arch, p.q_scaled()[:, 0], *self.cache.read(index, at + 1),
                                             self.self_off[index])
            by_head = outputs.reshape(arch.n_heads, 1, arch.d_head)  # as the rest of the layer takes them
            h, cross, _layer = decoder_layer_after_self(self.weights, index, h, by_head, self.sources[index], self.off)
            own.append(weights)
            read.append(cross[:, 0])
        self.length += 1
        return output_logits(side, h)[0] + self.weights.final_logits_bias, np.stack(own), np.stack(read)


def write_target(model: EncoderDecoderModel, source: str, settings: GenerationSettings | None = None,
                 off: Heads = frozenset(), progress: Progress | None = None,
                 on_step: Callable[[TargetStep], None] | None = None) -> TargetGeneration:
    """Write up to `settings.tokens` target tokens for `source` with the heads in `off` switched off;
    `on_step` hears of each token as it is made, and `progress(fraction, text)` of every token (an
    answer of False stops there: what was written stays, `stopped` = CANCELLED). Raises OptionsError
    for a chat (these models have no chat template) or more tokens than the decoder reads,
    SentenceError for a source with nothing to read, ModelError when the numbers overflow."""
    settings = settings or GenerationSettings()
    most = model.weights.decoder.arch.max_positions
    if settings.chat:
        raise OptionsError(f"{model.name} writes a target for a source text; it has no chat template")
    if settings.tokens > most:
        raise OptionsError(f"{model.name}'s decoder writes from 1 to {most:,} tokens, not {settings.tokens:,}")
    info = model.generation
    encoded = model.tokenizer.encode(source)
    result = TargetGeneration(model.name, source, encoded, settings, info.stop_ids, model.weights.decoder_start, off)
    rng = generator(settings.sampling)
    token = model.weights.decoder_start
    with np.errstate(all="ignore"):  # the numbers are checked; NumPy's warnings add nothing
        memory, _attention, _layers = encode(model.weights, encoded.ids, off)
        reader = _TargetReader(model, memory, off, settings.tokens)
        while True:
            logits, own, read = reader.read(token)
            if not np.isfinite(logits.sum(dtype=np.float64)):
                raise overflow_error(model.name, "the decoder's next-token scores")
            count = len(result.steps) + 1
            forced = info.forced_bos if count == 1 else info.forced_eos if count == settings.tokens else None
            choice = choose(logits, settings.sampling, rng)
            if forced is not None:
                choice = replace(choice, token_id=forced, probability=float(softmax(logits)[forced]))
            step = TargetStep(choice, model.tokenizer.token_text(choice.token_id), forced is not None, own, read)
            result.steps.append(step)
            if on_step is not None:
                on_step(step)
            token = choice.token_id
            if token in info.stop_ids or count == settings.tokens:
                result.stopped = STOP_TOKEN if token in info.stop_ids else LENGTH
                break
            if progress is not None and progress(count / settings.tokens,
                                                 f"token {count + 1} of {settings.tokens}") is False:
                result.stopped = CANCELLED
                break
    result.written = model.tokenizer.decode([i for i in result.ids if i not in model.tokenizer.special_ids])
    return result
