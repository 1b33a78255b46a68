"""transformers' own model on the weights our engine read, for the tests and benchmarks that compare
the two (needs torch and transformers: the `reference` extra)."""

from pathlib import Path

import numpy as np
import torch
import transformers
from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint


def llama_from(weights):
    """transformers' Llama holding the weights we read from the GGUF file (back in HF's (out, in) layout)."""
    arch = weights.arch
    config = transformers.LlamaConfig(
        vocab_size=arch.vocab_size, hidden_size=arch.d_model, intermediate_size=arch.d_ff,
        num_hidden_layers=arch.n_layers, num_attention_heads=arch.n_heads, num_key_value_heads=arch.n_kv_heads,
        rms_norm_eps=arch.norm_eps, rope_theta=arch.rope_theta, max_position_embeddings=arch.max_positions,
        tie_word_embeddings=True, attn_implementation="eager")
    state = {"model.embed_tokens.weight": weights.token_embedding, "model.norm.weight": weights.final_norm}
    for i, layer in enumerate(weights.layers):
        p = f"model.layers.{i}."
        state.update({
            p + "self_attn.q_proj.weight": layer.w_q.T, p + "self_attn.k_proj.weight": layer.w_k.T,
            p + "self_attn.v_proj.weight": layer.w_v.T, p + "self_attn.o_proj.weight": layer.w_o.T,
            p + "input_layernorm.weight": layer.attn_norm, p + "post_attention_layernorm.weight": layer.mlp_norm,
            p + "mlp.gate_proj.weight": layer.w_gate.T, p + "mlp.up_proj.weight": layer.w_up.T,
            p + "mlp.down_proj.weight": layer.w_down.T})
    # Built on the meta device and given our arrays (no copy): random initialisation of 135M weights
    # would take longer than the whole comparison. The rotary table is a buffer, so it is rebuilt.
    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(config)
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()},
                          strict=False, assign=True)
    model.tie_weights()
    model.model.rotary_emb = type(model.model.rotary_emb)(config)
    return model.eval()


def from_gguf(path):
    """transformers' model and tokenizer read from a GGUF file by transformers' own GGUF code (its
    config mapping, tensor renaming, dequantisation and tokenizer conversion), as `from_pretrained(...,
    gguf_file=)` reads it; the model is built here because that call also wants `accelerate` for a GGUF."""
    path = Path(path)
    config = transformers.AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name)
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    tensors = load_gguf_checkpoint(str(path), return_tensors=True, model_to_load=model)["tensors"]
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    assert not unexpected and set(missing) <= {"lm_head.weight"}, (missing, unexpected)
    model.tie_weights()
    return model.eval(), gguf_tokenizer(path)


def gguf_tokenizer(path):
    """transformers' tokenizer built from a GGUF file's metadata (`from_pretrained(..., gguf_file=)`)."""
    path = Path(path)
    return transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


def their_tokens(reference, ids, tokens: int, stop_ids) -> list[int]:
    """What transformers' greedy `generate` (with its cache) writes after `ids`, stopping at `stop_ids`."""
    return _greedy(reference, ids, tokens, stop_ids)[0, len(ids):].tolist()


def their_steps(reference, ids, tokens: int, stop_ids) -> tuple[list[int], list[np.ndarray]]:
    """their_tokens, and for each token the attention that chose it: the row of the token read last, in
    every layer and head (layers, heads, length), as its generate computed it (a model made with eager
    attention); a layer whose sliding-window cache no longer holds the first keys gives them no weight."""
    out = _greedy(reference, ids, tokens, stop_ids, output_attentions=True, return_dict_in_generate=True)
    rows = []
    for step, layers in enumerate(out.attentions):
        length = len(ids) + step
        rows.append(np.stack([np.pad(layer[0, :, -1].numpy(), ((0, 0), (length - layer.shape[-1], 0)))
                              for layer in layers]))
    return out.sequences[0, len(ids):].tolist(), rows


def _greedy(reference, ids, tokens: int, stop_ids, **asked):
    with torch.no_grad():
        return reference.generate(torch.tensor(np.asarray(ids))[None], max_new_tokens=tokens, do_sample=False,
                                  use_cache=True, eos_token_id=list(stop_ids) or None, pad_token_id=0, **asked)


def built_from_gguf(path, architecture: str | None = None):
    """ids of a text as transformers' GGUF tokenizer conversion gives them over the vocabulary of the
    GGUF file at `path` (a BOS in front when the file asks for one), built as for `architecture` (the
    file's own when None). `gguf_tokenizer` builds the same through AutoTokenizer, which refuses a file
    of an architecture transformers reads no model of ("gptneox")."""
    from transformers.integrations.gguf.gguf_tokenizer_mapping import convert_gguf_tokenizer, get_gguf_tokenizer

    own, vocabulary, config = get_gguf_tokenizer(str(path))
    backend, _ = convert_gguf_tokenizer(architecture or own, vocabulary)
    bos = [vocabulary["bos_token_id"]] if config.get("add_bos_token") else []
    return lambda text: bos + backend.encode(text).ids


def spaced_as_llama_cpp(path):
    """ids of a text as transformers' GGUF tokenizer for Phi-3 gives them, over the SentencePiece-style
    vocabulary of the GGUF file at `path` (a BOS in front when the file asks for one). transformers
    reads a "llama" file's vocabulary with a Metaspace that puts no ▁ in front of a text that starts
    with a space, nor after a special token; llama.cpp puts one in front of every text and of every
    text after a special token (llama_tokenize_impl), and transformers' Phi-3 builder does the same."""
    return built_from_gguf(path, "phi3")
