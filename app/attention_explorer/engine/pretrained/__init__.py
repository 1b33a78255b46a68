"""Real pretrained models in float32 NumPy: open, run, read every layer and head. The families (BERT,
RoBERTa, DistilBERT, GPT-2, GPT-NeoX/Pythia, Llama, Mistral, Qwen2/2.5, Qwen3, Phi-3, OLMo 2, Gemma,
Gemma 2) are one module each under families/. BART, an encoder–decoder, is one too, but it reads a
source and a target text: it opens and runs through encoder_decoder.py (open_encoder_decoder, then
.run(source, target)), and the one-text API below refuses it with a message saying so.

Pure NumPy like the rest of the engine (no Qt, no PyTorch). Needs the `tokenizers` package (the
`real` extra: pip install 'attention-explorer[real]'); without it, opening a model raises a
ModelError that says so, and the rest of the app is unaffected.

The API the window and the command line use:

    names = installed_models()                  # {"MiniLM-L6 (encoder)": path, ...} for installed packages
    model = open_pretrained(name_or_path, progress=None)   # known name, HF folder, or .gguf file
        # progress(fraction, text) -> bool: called while loading; return False to cancel (raises Cancelled).
        # Any unusable file raises ModelError naming the file and the field; a text is at most
        # engine.limits.MAX_REAL_TEXT_CHARS characters (SentenceError beyond).
    model.name, model.family (config.json's model_type: "bert", "llama", "qwen2", …),
    model.kind ("encoder" | "decoder"),
    model.n_layers, model.n_heads, model.n_kv_heads, model.d_model, model.is_decoder, model.max_tokens

    trace = model.run(text, ablate=frozenset({(layer, head), ...}), progress=None, previous=None)
        # 0-based; ablated heads output zero; progress hears of every layer and may cancel; with
        # `previous` (an earlier trace of the same text) the layers an ablation leaves alone are reused
    trace.tokens       # tidy pieces ("play", "·ing", "[CLS]"); trace.labels: the same told apart ("the₁")
    trace.special      # bool per token;  trace.words: token indices of each word
    trace.encoded.cut  # None, or Cut: the text was longer than model.max_tokens; which tokens were kept
        # (an encoder keeps the start, a decoder the end), cut.describe() says so in a sentence
    trace.next_tokens  # decoders: top 5 NextToken(token_id, text, label, probability); encoders: ()
    trace.thumbnails   # (layers, heads, m, m) float32: every head's weights pooled to at most 128 a side
    # The forward keeps each layer's input (memory grows with layers × n × d_model); a layer is made
    # again, exactly as the forward made it, when asked (a few layers are cached):
    trace.head_weights(layer, head)   # n × n float32, rows sum to 1 (causal for decoders)
    trace.layer_weights(layer)        # (heads, n, n)
    trace.all_weights()               # (layers, heads, n, n): short texts only
    trace.rollout(layer)              # n × n attention rollout after that layer
    trace.hidden_share(layer, hidden) # the mean weight the other rows give to hidden tokens
    trace.layer_trace(layer) -> engine.Trace   # one layer for the heatmap, arcs and steps:
        # x = the layer's (normalised) input; per head w_q/w_k/w_v slices and biases, q, k (after RoPE,
        # with q_before_rope/k_before_rope), v, scores, scaled, masked, weights, output; concat, w_o, output;
        # kv_head for shared key/value heads; ablated_heads. The n × n matrices, the outputs and the
        # concatenation are made when first read (engine.lazy_trace).

    merge_words(weights, trace.words)   # word-level weights (sum over looked-at pieces, mean over looking)
    hide_tokens(weights, indices)       # drop e.g. specials or a sink, renormalise rows; says how much was removed
    words_after_hiding(trace.words, hidden.kept)   # the words renumbered, to merge after hiding

Loading and running take from milliseconds to a few seconds: call them off the GUI thread.
"""

from ..lazy_exports import lazy_exports

# Each name is imported from its module on first use: the window lists the real models at start
# (catalog), while the readers and the forward load only once a real model is opened.
_HOME = {
    "HiddenTokens": "analysis", "attention_rollout": "analysis", "hide_tokens": "analysis",
    "kept_block": "analysis", "merge_words": "analysis", "rollout_mix": "analysis", "sum_runs": "analysis",
    "word_runs": "analysis",
    "words_after_hiding": "analysis",
    "KNOWN_MODELS": "catalog", "KnownModel": "catalog", "installed_models": "catalog", "known_model_path": "catalog",
    "PretrainedModel": "model", "open_pretrained": "model",
    "Cancelled": "progress", "Progress": "progress",
    "NextToken": "real_trace", "PretrainedTrace": "real_trace",
    "CONTINUATION": "tokenizing", "Encoded": "tokenizing",
}

__all__ = sorted(_HOME)


__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOME)
