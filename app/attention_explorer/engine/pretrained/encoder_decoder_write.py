"""An encoder–decoder (BART) writes a target for a source: greedy, one token at a time, as transformers'
`generate` does with num_beams=1 and do_sample=False.

The source is read once by the encoder; each decoder layer's cross-attention keys and values are made
from the encoder's last hidden states once too, since every target token reads the same source. The
decoder starts from decoder_start_token_id and reads each token it writes back in alone: its
self-attention keys and values go into a cache (kv_cache.py) that the next token reads, so a step
costs one token's work, as the one-text decoders' (decode.py, whose one-query attention it reuses
for both its self-attention and its cross-attention). It stops after a stop token (generation_config.json's
or config.json's eos_token_id) or the count asked for, whichever comes first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import OptionsError
from .decode import attend_newest
from .encoder_decoder import EncoderDecoderModel, encode
from .forward import affine, embed, feed_forward, norm, output_logits, project, split_heads
from .generation_info import folder_generation_info
from .kv_cache import KVCache


@dataclass(frozen=True)
class WrittenTarget:
    """What the decoder wrote for `source`: the ids after its start token, and their text."""

    source: str
    source_ids: np.ndarray
    ids: np.ndarray          # the tokens written, the stop token last when it stopped on one
    text: str                # the tokens written, as text (specials left out)
    stopped: bool            # it wrote a stop token (else it wrote the count asked for)


def write_target(model: EncoderDecoderModel, source: str, tokens: int = 32) -> WrittenTarget:
    """Up to `tokens` tokens written for `source`, each the likeliest (greedy). OptionsError for a count
    the decoder has no room for; SentenceError for a source with nothing to read."""
    side = model.weights.decoder
    arch = side.arch
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens < arch.max_positions:
        raise OptionsError(f"{model.name}'s decoder writes from 1 to {arch.max_positions - 1:,} tokens, not {tokens}")
    encoded = model.tokenizer.encode(source)
    stop_ids = folder_generation_info(model.path, arch.vocab_size, model.tokenizer.token_id).stop_ids
    with np.errstate(all="ignore"):
        memory, _attention, _layers = encode(model.weights, encoded.ids)
        sources = [(split_heads(affine(memory, c.w_k, c.b_k), arch.n_heads),
                    split_heads(affine(memory, c.w_v, c.b_v), arch.n_heads)) for c in model.weights.cross]
        cache = KVCache(arch, tokens, arch.max_positions)
        written = [model.weights.decoder_start]
        while len(written) <= tokens:
            logits = _step(model, cache, sources, written[-1], len(written) - 1)
            written.append(int(np.argmax(logits)))
            if written[-1] in stop_ids:
                break
    ids = np.array(written[1:], dtype=np.int64)
    return WrittenTarget(source, encoded.ids, ids, model.tokenizer.decode([i for i in ids if i not in
                                                                            model.tokenizer.special_ids]),
                         bool(len(ids)) and int(ids[-1]) in stop_ids)


def _step(model: EncoderDecoderModel, cache: KVCache, sources: list[tuple[np.ndarray, np.ndarray]], token: int,
          at: int) -> np.ndarray:
    """The decoder reads `token` at position `at` (its keys and values kept in `cache`) and gives the
    scores of the token after it (vocab,)."""
    side = model.weights.decoder
    arch = side.arch
    h = embed(side, np.array([token], dtype=np.int64), at)
    for index, (layer, cross) in enumerate(zip(side.layers, model.weights.cross, strict=True)):
        p = project(arch, layer, h, None)
        cache.write(index, at, p.k, p.v)
        outputs, _weights = attend_newest(arch, p.q_scaled()[:, 0], *cache.read(index, at + 1), None)
        h = norm(arch, h + affine(outputs, layer.w_o, layer.b_o), layer.attn_norm, layer.attn_norm_bias)
        q = split_heads(affine(h, cross.w_q, cross.b_q), arch.n_heads)[:, 0] * np.float32(1 / arch.score_divisor)
        outputs, _weights = attend_newest(arch, q, *sources[index], None)  # every source token: nothing masked
        h = norm(arch, h + affine(outputs, cross.w_o, cross.b_o), cross.norm, cross.norm_bias)
        h = norm(arch, h + feed_forward(arch, layer, h), layer.mlp_norm, layer.mlp_norm_bias)
    return output_logits(side, h)[0] + model.weights.final_logits_bias
