"""Make the tiny random checkpoints the real-model tests use (run once; the results are committed).

    python tests/engine/pretrained/make_tiny_checkpoints.py

Needs transformers, torch, tokenizers and gguf (the `reference` extra) and no network: the configs
come from transformers, the weights from a fixed seed, the tokenizers are built from a word list
(WordPiece) or trained on a few sentences (byte-level BPE). Every weight is drawn with a large
spread (0.4) so attention is sharp and the tests see peaked, varied heads, not uniform ones.

Writes under data/: tiny-bert/, tiny-gpt2/ and tiny-llama/ (HF folders: config.json,
model.safetensors, tokenizer.json) and tiny-llama.gguf (the same Llama in GGUF, its tensors in
F32, F16, Q8_0, Q4_0 and Q4_1 and its tokenizer in the metadata). tiny-llama/ holds the GGUF's
dequantised weights, so transformers reading the folder is the reference for the GGUF file too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gguf
import numpy as np
import torch
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

DATA = Path(__file__).with_name("data")
SEED = 12
SPREAD = 0.4
SENTENCES = [
    "the cat sat on the mat because it was tired",
    "the quick brown fox jumped over the lazy dog",
    "my dog chased a ball in the park and the cats were playing",
    "attention is all you need, said the paper in 2017",
    "a robot reads 42 books while the children are sleeping",
]
WORDS = sorted({w for s in SENTENCES for w in s.replace(",", " ,").split()}) + ["play", "sleep", "read", "jump"]
PIECES = ["##s", "##ing", "##ed", "##er", "##ly"]
SPECIAL = "<|endoftext|>"


def randomise(model: torch.nn.Module) -> None:
    """Every weight ~ N(0, SPREAD²), biases ~ N(0, 0.1²), norm scales ~ 1 + N(0, 0.1²), from SEED."""
    generator = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            if "norm" in name.lower() or "ln_" in name:
                param.copy_(1 + 0.1 * noise if name.endswith("weight") else 0.1 * noise)
            elif name.endswith("bias"):
                param.copy_(0.1 * noise)
            else:
                param.copy_(SPREAD * noise)


def wordpiece_tokenizer() -> Tokenizer:
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *PIECES])}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.add_special_tokens([AddedToken(t, special=True) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")])
    return tokenizer


def byte_bpe_tokenizer(vocab_size: int) -> Tokenizer:
    """Byte-level BPE like SmolLM2's: digits split one by one, then GPT-2's pre-tokenizer."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[SPECIAL],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(SENTENCES * 3, trainer)
    return tokenizer


def save(model, tokenizer: Tokenizer, folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    model.save_pretrained(folder, safe_serialization=True)
    (folder / "generation_config.json").unlink(missing_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))


def make_bert() -> None:
    tokenizer = wordpiece_tokenizer()
    config = BertConfig(vocab_size=tokenizer.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                        initializer_range=SPREAD)
    model = BertModel(config, add_pooling_layer=False)
    randomise(model)
    save(model, tokenizer, DATA / "tiny-bert")


def make_gpt2() -> None:
    tokenizer = byte_bpe_tokenizer(320)
    config = GPT2Config(vocab_size=tokenizer.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=64,
                        bos_token_id=0, eos_token_id=0, initializer_range=SPREAD)
    model = GPT2LMHeadModel(config)
    randomise(model)
    save(model, tokenizer, DATA / "tiny-gpt2")


def permute(weight: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's row order for W_Q/W_K (what its converter does to HF's)."""
    rows = weight.shape[0]
    return weight.reshape(heads, 2, rows // heads // 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


def unpermute(weight: np.ndarray, heads: int) -> np.ndarray:
    """HF's row order back from llama.cpp's (written here independently of the reader under test)."""
    rows = weight.shape[0]
    return weight.reshape(heads, rows // heads // 2, 2, *weight.shape[1:]).swapaxes(1, 2).reshape(weight.shape)


# GGUF type of each tensor of the tiny Llama: one of every kind the reader dequantises.
Q = gguf.GGMLQuantizationType
GGUF_TYPES = {"token_embd": Q.Q8_0, "attn_q": Q.Q4_0, "attn_k": Q.Q4_1, "attn_v": Q.Q8_0, "attn_output": Q.F16,
              "ffn_gate": Q.Q4_1, "ffn_up": Q.F16, "ffn_down": Q.F32}


def make_llama() -> None:
    tokenizer = byte_bpe_tokenizer(320)
    heads, kv_heads = 4, 2
    config = LlamaConfig(vocab_size=tokenizer.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=heads, num_key_value_heads=kv_heads, intermediate_size=64,
                         max_position_embeddings=64, rope_theta=100000.0, rms_norm_eps=1e-5,
                         tie_word_embeddings=True, initializer_range=SPREAD)
    model = LlamaForCausalLM(config)
    randomise(model)
    hf = {name: p.detach().numpy().copy() for name, p in model.state_dict().items()}
    names = {"model.embed_tokens.weight": "token_embd.weight", "model.norm.weight": "output_norm.weight"}
    for i in range(config.num_hidden_layers):
        hf_prefix, g_prefix = f"model.layers.{i}.", f"blk.{i}."
        for hf_name, g_name in [("self_attn.q_proj", "attn_q"), ("self_attn.k_proj", "attn_k"),
                                ("self_attn.v_proj", "attn_v"), ("self_attn.o_proj", "attn_output"),
                                ("mlp.gate_proj", "ffn_gate"), ("mlp.up_proj", "ffn_up"), ("mlp.down_proj", "ffn_down"),
                                ("input_layernorm", "attn_norm"), ("post_attention_layernorm", "ffn_norm")]:
            names[f"{hf_prefix}{hf_name}.weight"] = f"{g_prefix}{g_name}.weight"
    writer = gguf.GGUFWriter(str(DATA / "tiny-llama.gguf"), arch="llama")
    writer.add_block_count(config.num_hidden_layers)
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_freq_base(100000.0)
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_vocab_size(config.vocab_size)
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("smollm")
    writer.add_token_list([token for token, _ in vocab])
    writer.add_token_types([3 if token == SPECIAL else 1 for token, _ in vocab])
    writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
    writer.add_bos_token_id(0)
    writer.add_add_bos_token(False)
    dequantised = {}
    for hf_name, g_name in names.items():
        array = hf[hf_name]
        if g_name.endswith(("attn_q.weight", "attn_k.weight")):
            array = permute(array, heads if "attn_q" in g_name else kv_heads)
        kind = GGUF_TYPES.get(g_name.split(".")[-2], Q.F32)
        if kind in (Q.F32, Q.F16):
            stored = array.astype(np.float32 if kind == Q.F32 else np.float16)
            writer.add_tensor(g_name, stored)
            back = stored.astype(np.float32)
        else:
            stored = gguf.quants.quantize(array, kind)
            writer.add_tensor(g_name, stored, raw_shape=stored.shape, raw_dtype=kind)
            back = gguf.quants.dequantize(stored, kind).reshape(array.shape)
        if g_name.endswith(("attn_q.weight", "attn_k.weight")):  # back to HF's order
            back = unpermute(back, heads if "attn_q" in g_name else kv_heads)
        dequantised[hf_name] = back
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in dequantised.items()}, strict=False)
    save(model, tokenizer, DATA / "tiny-llama")


if __name__ == "__main__":
    DATA.mkdir(exist_ok=True)
    make_bert()
    make_gpt2()
    make_llama()
    for path in sorted(DATA.rglob("*")):
        if path.is_file():
            print(f"{path.relative_to(DATA)}: {path.stat().st_size / 1024:.0f} KiB")
