"""Make the tiny random checkpoints the real-model tests use (run once; the results are committed).

    python tests/engine/pretrained/make_tiny_checkpoints.py            # every one
    python tests/engine/pretrained/make_tiny_checkpoints.py qwen2 gemma2   # only these (names below)

Needs transformers, torch, tokenizers and gguf (the `reference` extra) and no network: the configs
come from transformers, the weights from a fixed seed, the tokenizers are built from a word list
(WordPiece) or trained on a few sentences (byte-level BPE). Every weight is drawn with a large
spread (0.4) so attention is sharp and the tests see peaked, varied heads, not uniform ones.

Writes under data/: tiny-bert/, tiny-gpt2/ and tiny-llama/ (HF folders: config.json,
model.safetensors, tokenizer.json) and tiny-llama.gguf (the same Llama in GGUF, its tensors in
F32, F16, Q8_0, Q4_0 and Q4_1 and its tokenizer in the metadata). tiny-llama/ holds the GGUF's
dequantised weights, so transformers reading the folder is the reference for the GGUF file too.

And one HF folder for each other family (families/ in the engine), each with what makes its family
differ switched on at a size where it shows: tiny-qwen2/, tiny-mistral/ (a window of 4 tokens),
tiny-qwen3/ and tiny-gemma/ (heads wider than hidden size ÷ heads), tiny-phi3/ (rotary over 3/4 of
a head), tiny-olmo2/, tiny-gpt-neox/ (rotary over half a head, its own output matrix), tiny-gemma2/
(its own score scale, caps low enough to bend the scores, a layer with a window of 4 tokens and one
with the whole text), tiny-gemma3/ (its q/k norms, windowed layers around a global one, each kind with
its own rotary base, the global one's scaled linearly), tiny-roberta/, tiny-distilbert/ and
tiny-modernbert/ (a local layer between two global ones, each kind with its own rotary base). The
byte-level decoders reuse tiny-llama's tokenizer.json, Gemma 3 tiny-gemma's and DistilBERT and
ModernBERT tiny-bert's; Mistral and Gemma get SentencePiece-style ones (▁ for spaces, bytes for what the
vocabulary lacks, a BOS in front), RoBERTa its byte-level one with <s> … </s>.

And the GGUF files of the other architectures, each from its folder (its maker says how), and three
with a scaled RoPE (tiny_checkpoints.SCALED_GGUF, make_scaled_gguf): tiny-llama-llama3.gguf,
tiny-llama-yarn.gguf and tiny-phi3-longrope.gguf.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import gguf
import numpy as np
import safetensors.numpy
import torch
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    BertConfig,
    BertModel,
    DistilBertConfig,
    DistilBertModel,
    Gemma2Config,
    Gemma2ForCausalLM,
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    GemmaConfig,
    GemmaForCausalLM,
    GPT2Config,
    GPT2LMHeadModel,
    GPTNeoXConfig,
    GPTNeoXForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    ModernBertConfig,
    ModernBertModel,
    Olmo2Config,
    Olmo2ForCausalLM,
    Phi3Config,
    Phi3ForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen3Config,
    Qwen3ForCausalLM,
    RobertaConfig,
    RobertaModel,
)

DATA = Path(__file__).with_name("data")
sys.path.insert(0, str(Path(__file__).parents[2]))  # tests/: the scaled GGUF files' fields are the tests' own
from tiny_checkpoints import SCALED_GGUF, set_fields  # noqa: E402

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


def randomise(model: torch.nn.Module, norm_centre: float = 1.0) -> None:
    """Every weight ~ N(0, SPREAD²), biases ~ N(0, 0.1²), norm scales ~ 1 + N(0, 0.1²), from SEED. A family
    whose norms scale by 1 + w (Gemma) stores w − 1: its norm weights are drawn around `norm_centre` 0."""
    generator = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn(param.shape, generator=generator)
            if "norm" in name.lower() or "ln_" in name:
                param.copy_(norm_centre + 0.1 * noise if name.endswith("weight") else 0.1 * noise)
            elif name.endswith("bias"):
                param.copy_(0.1 * noise)
            else:
                param.copy_(SPREAD * noise)


WORDPIECE_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece_tokenizer() -> Tokenizer:
    vocab = {t: i for i, t in enumerate([*WORDPIECE_SPECIALS, *WORDS, *PIECES])}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.add_special_tokens([AddedToken(t, special=True) for t in WORDPIECE_SPECIALS])
    return tokenizer


def byte_bpe_tokenizer(vocab_size: int, digits: bool = True, specials: list[str] | None = None,
                       around: tuple[str, str] | None = None) -> Tokenizer:
    """Byte-level BPE like SmolLM2's: digits split one by one, then GPT-2's pre-tokenizer (without
    `digits`, GPT-2's pre-tokenizer alone, as GPT-2's and Pythia's). Its special tokens `specials`
    (<|endoftext|> alone by default), and with `around` the two put before and after every text."""
    tokenizer = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.pre_tokenizer = (pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
                               if digits else byte_level)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials or [SPECIAL],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(SENTENCES * 3, trainer)
    if around:
        before, after = around
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{before} $A {after}", special_tokens=[(t, tokenizer.token_to_id(t)) for t in around])
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


# Qwen2's split before byte-level BPE, as its tokenizer.json writes it (llama.cpp's "qwen2" pre-tokenizer).
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# cl100k_base's, as OLMo 2's tokenizer.json writes it (llama.cpp's "dbrx" pre-tokenizer): numbers of up to 3 digits.
CL100K_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
QWEN_ADDED = "<think>"  # an added token that is not special (GGUF token type 4, user-defined)


def qwen_tokenizer(vocab_size: int, split: str = QWEN2_SPLIT) -> Tokenizer:
    """Byte-level BPE like Qwen2's and Qwen3's: their split (or another `split`: OLMo 2's), then bytes;
    three specials and <think>. Trained on the sentences and a few with accents, so some merges hold
    two-byte characters."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(split), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - 1, special_tokens=QWEN_SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator((SENTENCES + ["le café était déjà fermé", "über die Brücke"]) * 3, trainer)
    tokenizer.add_tokens([AddedToken(QWEN_ADDED, normalized=False, special=False)])
    assert tokenizer.get_vocab_size() == vocab_size
    return tokenizer


def byte_bpe_metadata(tokenizer: Tokenizer, pre: str, eos: str, bos: str | None = None, pad: str | None = None):
    """What llama.cpp's converter writes for a byte-level BPE tokenizer ("gpt2"), as a writer of it.
    With `bos`, an encoder's (what the gguf package's SpecialVocab reads from RoBERTa's processor, and
    what ModernBERT's converter sets): `bos` before the text and `eos` after it (also the separator),
    and the padding token `pad`."""
    def write(writer: gguf.GGUFWriter) -> None:
        vocab = sorted(tokenizer.get_vocab(with_added_tokens=True).items(), key=lambda item: item[1])
        specials = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
        writer.add_tokenizer_model("gpt2")
        writer.add_tokenizer_pre(pre)
        writer.add_token_list([token for token, _ in vocab])
        writer.add_token_types([3 if token in specials else 4 if token == QWEN_ADDED else 1 for token, _ in vocab])
        merges = json.loads(tokenizer.to_str())["model"]["merges"]
        writer.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in merges])
        if bos is None:
            writer.add_bos_token_id(0)
            writer.add_eos_token_id(tokenizer.token_to_id(eos))
            writer.add_add_bos_token(False)
            return
        writer.add_bos_token_id(tokenizer.token_to_id(bos))
        writer.add_eos_token_id(tokenizer.token_to_id(eos))
        writer.add_sep_token_id(tokenizer.token_to_id(eos))
        writer.add_pad_token_id(tokenizer.token_to_id(pad))
        writer.add_add_bos_token(True)
        writer.add_add_eos_token(True)
        writer.add_add_sep_token(True)
    return write


def wordpiece_metadata(tokenizer: Tokenizer):
    """What llama.cpp's BERT converter writes for a WordPiece tokenizer ("bert"): the tokens in id order,
    each but the control ones in "phantom space" form ("▁cat" for a word's first piece "cat", "ing"
    for "##ing"), control 3, normal 1; [CLS] as the BOS and [SEP] as the EOS and separator, as the
    gguf package's SpecialVocab reads a "[CLS] $A [SEP]" template; the split named as a file of
    bert-base-uncased's vocabulary (all-MiniLM, bge) names it, which llama.cpp does not read for WordPiece."""
    def write(writer: gguf.GGUFWriter) -> None:
        vocab = sorted(tokenizer.get_vocab(with_added_tokens=True).items(), key=lambda item: item[1])
        specials = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
        writer.add_tokenizer_model("bert")
        writer.add_tokenizer_pre("bert-bge")
        writer.add_token_list([token if token in specials else token[2:] if token.startswith("##") else "▁" + token
                               for token, _ in vocab])
        writer.add_token_types([3 if token in specials else 1 for token, _ in vocab])
        ids = tokenizer.token_to_id
        writer.add_bos_token_id(ids("[CLS]"))
        writer.add_eos_token_id(ids("[SEP]"))
        writer.add_unk_token_id(ids("[UNK]"))
        writer.add_sep_token_id(ids("[SEP]"))
        writer.add_pad_token_id(ids("[PAD]"))
        writer.add_mask_token_id(ids("[MASK]"))
        writer.add_add_bos_token(True)
        writer.add_add_eos_token(True)
    return write


def sentencepiece_metadata(tokenizer: Tokenizer, bos: str, eos: str, space_prefix: bool):
    """What llama.cpp's converter writes for a SentencePiece-style tokenizer ("llama"): the tokens in
    id order, each scored −id (a SentencePiece BPE model's scores: the earlier merge the higher), types
    unknown 2, control 3, byte 6, normal 1; no merges."""
    def write(writer: gguf.GGUFWriter) -> None:
        vocab = sorted(tokenizer.get_vocab(with_added_tokens=True).items(), key=lambda item: item[1])
        specials = {t.content for t in tokenizer.get_added_tokens_decoder().values() if t.special}
        writer.add_tokenizer_model("llama")
        writer.add_tokenizer_pre("default")
        writer.add_token_list([token for token, _ in vocab])
        writer.add_token_scores([-float(i) for _, i in vocab])
        writer.add_token_types([2 if token == "<unk>" else 3 if token in specials else
                                6 if token.startswith("<0x") and len(token) == 6 else 1 for token, _ in vocab])
        writer.add_bos_token_id(tokenizer.token_to_id(bos))
        writer.add_eos_token_id(tokenizer.token_to_id(eos))
        writer.add_unk_token_id(tokenizer.token_to_id("<unk>"))
        writer.add_add_bos_token(True)
        writer.add_add_space_prefix(space_prefix)
    return write


def first_sizes(writer: gguf.GGUFWriter, config: dict) -> None:
    """The sizes the Llama-like, BERT and ModernBERT converters write first, in this order (the order is
    the files' bytes)."""
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])


def llama_parameters(writer: gguf.GGUFWriter, config: dict) -> None:
    """The metadata llama.cpp's converters of the Llama-like architectures write from config.json."""
    first_sizes(writer, config)
    writer.add_head_count_kv(config["num_key_value_heads"])
    if config.get("head_dim") is not None:  # as llama.cpp's converters write it when config.json has it
        writer.add_key_length(config["head_dim"])
        writer.add_value_length(config["head_dim"])
    rope = config.get("rope_parameters") or {}
    rope = rope.get("full_attention", rope)  # a model whose kinds of layer turn differently: the global ones'
    writer.add_rope_freq_base(config.get("rope_theta") or rope["rope_theta"])
    if rope.get("rope_type") == "linear":
        writer.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
        writer.add_rope_scaling_factor(rope["factor"])
    if rope.get("rope_type") == "yarn":  # the converters' shared part: YaRN's keys, the optional ones when set
        writer.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        writer.add_rope_scaling_factor(rope["factor"])
        writer.add_rope_scaling_orig_ctx_len(rope["original_max_position_embeddings"])
        for key, add in (("attention_factor", writer.add_rope_scaling_yarn_attn_factor),
                         ("beta_fast", writer.add_rope_scaling_yarn_beta_fast),
                         ("beta_slow", writer.add_rope_scaling_yarn_beta_slow)):
            if rope.get(key) is not None:
                add(rope[key])
    if config.get("partial_rotary_factor"):  # Phi-3's converter: the dims RoPE turns
        head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
        writer.add_rope_dimension_count(int(head_dim * config["partial_rotary_factor"]))
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    for key in ("attn_logit_softcapping", "final_logit_softcapping"):  # Gemma 2's converter
        if config.get(key):
            getattr(writer, f"add_{key}")(config[key])
    if config.get("sliding_window"):
        writer.add_sliding_window(config["sliding_window"])


def llama3_parameters(writer: gguf.GGUFWriter, config: dict) -> None:
    """Llama's converter: a Llama 3.1 scaling is no metadata but the tensor rope_freqs, a divisor per
    frequency (1 kept, the factor, or blended between), worked out as its generate_extra_tensors does."""
    llama_parameters(writer, config)
    rope = config["rope_parameters"]
    dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    freqs = 1.0 / (rope["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    original = config.get("original_max_position_embeddings", 8192)
    divisors = []
    for freq in freqs:
        wavelength = 2 * math.pi / freq
        if wavelength < original / high:
            divisors.append(1)
        elif wavelength > original / low:
            divisors.append(factor)
        else:
            smooth = (original / wavelength - low) / (high - low)
            divisors.append(1 / ((1 - smooth) / factor + smooth))
    writer.add_tensor("rope_freqs.weight", np.array(divisors, dtype=np.float32))


def phi3_parameters(writer: gguf.GGUFWriter, config: dict) -> None:
    """Phi-3's converter: the Llama-like sizes, the original context always, and for a 128k model's
    longrope its two factor lists as tensors and the attention factor it works out from the contexts."""
    llama_parameters(writer, config)
    original = config["original_max_position_embeddings"]
    writer.add_rope_scaling_orig_ctx_len(original)
    rope = config["rope_parameters"]
    if not rope.get("long_factor"):
        return
    scale = config["max_position_embeddings"] / original
    writer.add_rope_scaling_attn_factors(math.sqrt(1 + math.log(scale) / math.log(original)) if scale > 1 else 1.0)
    writer.add_tensor("rope_factors_long.weight", np.array(rope["long_factor"], dtype=np.float32))
    writer.add_tensor("rope_factors_short.weight", np.array(rope["short_factor"], dtype=np.float32))


def gpt2_parameters(writer: gguf.GGUFWriter, config: dict) -> None:
    """GPT-2's converter: the feed-forward 4 × the width, LayerNorm's epsilon, no key/value heads. Its
    context length is config.json's `n_ctx`, which transformers no longer writes: `n_positions` is it."""
    writer.add_block_count(config["n_layer"])
    writer.add_context_length(config["n_positions"])
    writer.add_embedding_length(config["n_embd"])
    writer.add_feed_forward_length(4 * config["n_embd"])
    writer.add_head_count(config["n_head"])
    writer.add_layer_norm_eps(config["layer_norm_epsilon"])


def gpt_neox_parameters(writer: gguf.GGUFWriter, config: dict) -> None:
    """GPT-NeoX's converter: the dims RoPE turns (`rotary_pct`, in transformers' newer config.json
    `rope_parameters`' `partial_rotary_factor`, of the head), the parallel residual, LayerNorm's epsilon;
    no key/value heads and no rotary base (llama.cpp takes 10,000)."""
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    fraction = config.get("rotary_pct") or config["rope_parameters"]["partial_rotary_factor"]
    writer.add_rope_dimension_count(int(fraction * (config["hidden_size"] // config["num_attention_heads"])))
    writer.add_head_count(config["num_attention_heads"])
    writer.add_parallel_residual(config.get("use_parallel_residual", True))
    writer.add_layer_norm_eps(config["layer_norm_eps"])


def grouped_qkv(heads: int):
    """GPT-NeoX's converter: the fused query_key_value's rows (and bias), each head's q, k, v in turn,
    regrouped as q | k | v of all heads; and the reference's way back (`write_gguf`'s `layout`)."""
    def into(g_name: str, array: np.ndarray) -> np.ndarray:
        if g_name.split(".")[-2] != "attn_qkv":
            return array
        return array.reshape(heads, 3, -1, *array.shape[1:]).swapaxes(0, 1).reshape(array.shape)

    def back(g_name: str, array: np.ndarray) -> np.ndarray:
        if g_name.split(".")[-2] != "attn_qkv":
            return array
        return array.reshape(3, heads, -1, *array.shape[1:]).swapaxes(0, 1).reshape(array.shape)
    return into, back


def bert_parameters(writer: gguf.GGUFWriter, config: dict) -> None:
    """BERT's converter: the sizes, LayerNorm's epsilon, attention that is not causal, and the rows of
    the segment table (written with the vocabulary, as the number of token types)."""
    first_sizes(writer, config)
    writer.add_layer_norm_eps(config["layer_norm_eps"])
    writer.add_causal_attention(False)
    writer.add_token_type_count(config["type_vocab_size"])


def roberta_parameters(writer: gguf.GGUFWriter, config: dict) -> None:
    """RoBERTa's converter: BERT's, with the context the position table keeps once its first padding id + 1
    rows are cut (`cut_positions`)."""
    bert_parameters(writer, {**config, "max_position_embeddings": config["max_position_embeddings"]
                             - config["pad_token_id"] - 1})


def cut_positions(rows: int):
    """RoBERTa's converter drops the position table's first `rows` rows (the padding id's and those before
    it, which no token of a text without padding reaches); the reference puts zeros back in their place."""
    def cut(g_name: str, array: np.ndarray) -> np.ndarray:
        return array[rows:].copy() if g_name == "position_embd.weight" else array

    def back(g_name: str, array: np.ndarray) -> np.ndarray:
        if g_name != "position_embd.weight":
            return array
        return np.concatenate([np.zeros((rows, array.shape[1]), np.float32), array])
    return cut, back


def modernbert_parameters(writer: gguf.GGUFWriter, config: dict) -> None:
    """ModernBERT's converter: BERT's sizes, its window, the period of its global layers, each kind's
    rotary base (the global one as `rope.freq_base`), no scaling, and the vocabulary's size; the epsilon
    `norm_eps` where the converters' shared part puts it, with RMSNorm's (`layer_norm_rms_epsilon`), and a
    `layer_norm_eps` (the released models' config.json has both, alike) as LayerNorm's, which llama.cpp's
    ModernBERT reads: tiny-modernbert/, saved by transformers 5, has only `norm_eps`. No activation."""
    first_sizes(writer, config)
    writer.add_layer_norm_rms_eps(config["norm_eps"])
    if "layer_norm_eps" in config:
        writer.add_layer_norm_eps(config["layer_norm_eps"])
    writer.add_causal_attention(False)
    writer.add_sliding_window(config["local_attention"])
    writer.add_sliding_window_pattern(config["global_attn_every_n_layers"])
    writer.add_rope_freq_base(config["rope_parameters"]["full_attention"]["rope_theta"])
    writer.add_rope_freq_base_swa(config["rope_parameters"]["sliding_attention"]["rope_theta"])
    writer.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    writer.add_vocab_size(MODERNBERT_GGUF_VOCAB)


def token_table(rows: int, width: int):
    """In place of the folder's token embedding, a table of `rows` drawn as `randomise` draws (for a
    vocabulary other than the folder's), kept as it is in the reference."""
    def swap(g_name: str, array: np.ndarray) -> np.ndarray:
        if g_name != "token_embd.weight":
            return array
        return (SPREAD * torch.randn((rows, width), generator=torch.Generator().manual_seed(SEED))).numpy()
    return swap, lambda g_name, array: array


def transposed(stems: set[str]):
    """A converter that stores the weights of these tensor stems transposed (GPT-2's Conv1D layers), and
    the reference's way back (the same transposition): `write_gguf`'s `layout`."""
    def turn(g_name: str, array: np.ndarray) -> np.ndarray:
        return array.T.copy() if g_name.endswith(".weight") and g_name.split(".")[-2] in stems else array
    return turn, turn


def write_gguf(name: str, arch: gguf.MODEL_ARCH, write_tokenizer, norms_plus_one: bool = False,
               types: dict = GGUF_TYPES, parameters=llama_parameters, layout=None, out: str | Path | None = None,
               config: dict | None = None, weights: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """tiny-`name`.gguf from the committed tiny-`name`/ folder's weights, as llama.cpp's converter writes that
    architecture (its metadata by `parameters`; tensor names from the gguf package's own map; W_Q's and
    W_K's rows (and biases) interleaved per head for "llama" only, as only its Llama converter permutes
    them; with `norms_plus_one`, every norm's weight stored as 1 + w, as its Gemma converters store
    them; `layout`, what another converter does to a tensor and how the reference undoes it: a pair
    of functions of the GGUF name and the array), the tensors in the kinds `types` gives, the
    tokenizer by `write_tokenizer`; to the file `out` (under data/ unless a full path) and with `config`
    and `weights` (HF names → float32 arrays) in place of the folder's, if given (bench_big_checkpoint.py's
    checkpoints). Returns the dequantised weights under their HF names, in HF's layout (norms as HF's: the
    stored weight − 1)."""
    folder = DATA / f"tiny-{name}"
    config = config or json.loads((folder / "config.json").read_text())
    hf = weights if weights is not None else safetensors.numpy.load_file(str(folder / "model.safetensors"))
    writer = gguf.GGUFWriter(str(DATA / (out or f"tiny-{name}.gguf")), arch=gguf.MODEL_ARCH_NAMES[arch])
    parameters(writer, config)
    write_tokenizer(writer)
    names = gguf.get_tensor_name_map(arch, config.get("num_hidden_layers") or config["n_layer"])
    into, back_from = layout or (None, None)
    dequantised = {}
    for hf_name, array in hf.items():
        g_name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if into:
            array = into(g_name, array)
        heads = {"attn_q": config["num_attention_heads"], "attn_k": config["num_key_value_heads"]}.get(
            g_name.split(".")[-2]) if arch == gguf.MODEL_ARCH.LLAMA else None
        if heads:
            array = permute(array, heads)
        plus_one = norms_plus_one and hf_name.endswith("norm.weight")
        if plus_one:
            array = array + np.float32(1)
        kind = types.get(g_name.split(".")[-2], Q.F32) if g_name.endswith(".weight") else Q.F32
        if kind in (Q.F32, Q.F16):
            stored = array.astype(np.float32 if kind == Q.F32 else np.float16)
            writer.add_tensor(g_name, stored)
            back = stored.astype(np.float32)
        else:
            stored = gguf.quants.quantize(array, kind)
            writer.add_tensor(g_name, stored, raw_shape=stored.shape, raw_dtype=kind)
            back = gguf.quants.dequantize(stored, kind).reshape(array.shape)
        if back_from:
            back = back_from(g_name, back)
        dequantised[hf_name] = back - np.float32(1) if plus_one else unpermute(back, heads) if heads else back
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return dequantised


def save_dequantised(name: str, model_class, dequantised: dict[str, np.ndarray], tokenizer: Tokenizer,
                     **config) -> None:
    """tiny-`name`-gguf/: the folder tiny-`name`/ with the GGUF file's dequantised weights and `tokenizer`
    (and `config` changed, where llama.cpp reads the file otherwise than the folder's config.json says)."""
    model = model_class.from_pretrained(str(DATA / f"tiny-{name}"), **config)
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in dequantised.items()}, strict=False)
    save(model, tokenizer, DATA / f"tiny-{name}-gguf")


def make_qwen2_gguf() -> None:
    """tiny-qwen2.gguf: transformers reads it itself (its GGUF loader), so no folder is written for it."""
    write_gguf("qwen2", gguf.MODEL_ARCH.QWEN2, byte_bpe_metadata(qwen_tokenizer(320), "qwen2", "<|im_end|>"))


def make_qwen3_gguf() -> None:
    """tiny-qwen3.gguf, and tiny-qwen3-gguf/ holding its dequantised weights for transformers:
    transformers 5.24 reads a Qwen3 GGUF's head width as hidden size ÷ heads (it does not map
    `qwen3.attention.key_length`), so it cannot read this one, whose heads are wider."""
    tokenizer = qwen_tokenizer(320)
    dequantised = write_gguf("qwen3", gguf.MODEL_ARCH.QWEN3, byte_bpe_metadata(tokenizer, "qwen2", "<|im_end|>"))
    save_dequantised("qwen3", Qwen3ForCausalLM, dequantised, tokenizer)


def make_gemma_gguf() -> None:
    """tiny-gemma.gguf (its norms stored as 1 + w, its tokenizer SentencePiece-style with no space in
    front), and tiny-gemma-gguf/ holding its dequantised weights: transformers 5.24 has no GGUF loader
    for the "gemma" architecture (only gemma2 on)."""
    tokenizer = reused("gemma")
    dequantised = write_gguf("gemma", gguf.MODEL_ARCH.GEMMA,
                             sentencepiece_metadata(tokenizer, "<bos>", "<eos>", space_prefix=False),
                             norms_plus_one=True)
    save_dequantised("gemma", GemmaForCausalLM, dequantised, tokenizer)


def make_gemma2_gguf() -> None:
    """tiny-gemma2.gguf and tiny-gemma2-gguf/, its dequantised weights with query_pre_attn_scalar 8: a
    GGUF file does not hold it, and llama.cpp scales the scores by its head width (8) where the folder
    says 12. transformers' own GGUF loader would take 256, Gemma2Config's default."""
    tokenizer = reused("gemma2")
    dequantised = write_gguf("gemma2", gguf.MODEL_ARCH.GEMMA2,
                             sentencepiece_metadata(tokenizer, "<bos>", "<eos>", space_prefix=False),
                             norms_plus_one=True)
    save_dequantised("gemma2", Gemma2ForCausalLM, dequantised, tokenizer, query_pre_attn_scalar=8)


def make_gemma3_gguf() -> None:
    """tiny-gemma3.gguf (its norms, q/k norms too, stored as 1 + w; the global layers' base 100,000 and
    linear factor 4 as `rope.freq_base` and `rope.scaling.*`; tiny-gemma's SentencePiece-style
    vocabulary), and tiny-gemma3-gguf/ holding its dequantised weights as llama.cpp reads the file: a
    GGUF file holds neither the layers' kinds nor the local layers' base, and llama.cpp makes every
    sixth layer global (so none of these three) and turns the local ones with base 10,000 (tiny-gemma3/
    says 100), and scales the scores by the head width, 8 (tiny-gemma3/ says 12). transformers' own GGUF
    loader would take Gemma3TextConfig's 256 for that scale and read no rotary scaling."""
    tokenizer = reused("gemma")
    dequantised = write_gguf("gemma3", gguf.MODEL_ARCH.GEMMA3,
                             sentencepiece_metadata(tokenizer, "<bos>", "<eos>", space_prefix=False),
                             norms_plus_one=True)
    config = json.loads((DATA / "tiny-gemma3" / "config.json").read_text())
    rope = {**config["rope_parameters"], "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}
    save_dequantised("gemma3", Gemma3ForCausalLM, dequantised, tokenizer, query_pre_attn_scalar=8,
                     layer_types=["sliding_attention"] * config["num_hidden_layers"], rope_parameters=rope)


def make_bert_gguf() -> None:
    """tiny-bert.gguf (tensors as they are, the WordPiece vocabulary in llama.cpp's "phantom space"
    form), and tiny-bert-gguf/ holding its dequantised weights and tiny-bert's tokenizer.json: transformers
    5.24 reads no "bert" GGUF, neither its model nor its tokenizer."""
    tokenizer = reused("bert")
    dequantised = write_gguf("bert", gguf.MODEL_ARCH.BERT, wordpiece_metadata(tokenizer), parameters=bert_parameters)
    save_dequantised("bert", BertModel, dequantised, tokenizer, add_pooling_layer=False)


def make_roberta_gguf() -> None:
    """tiny-roberta.gguf (a "bert" file, as llama.cpp's converter writes a RoBERTa: the position table
    without its first padding id + 1 rows, the byte-level vocabulary named "roberta-bpe" with <s> … </s>
    around every text), and tiny-roberta-gguf/ holding its dequantised weights (zeros for the cut rows,
    which a text without padding never reads) and tiny-roberta's tokenizer.json: transformers 5.24
    reads no "bert" GGUF."""
    tokenizer = reused("roberta")
    pad = json.loads((DATA / "tiny-roberta" / "config.json").read_text())["pad_token_id"]
    metadata = byte_bpe_metadata(tokenizer, "roberta-bpe", "</s>", bos="<s>", pad="<pad>")
    dequantised = write_gguf("roberta", gguf.MODEL_ARCH.BERT, metadata,
                             parameters=roberta_parameters, layout=cut_positions(pad + 1))
    save_dequantised("roberta", RobertaModel, dequantised, tokenizer, add_pooling_layer=False)


def make_scaled_gguf() -> None:
    """Each file of tiny_checkpoints.SCALED_GGUF, from its folder's weights (a GGUF file's dequantised
    weights, quantised here as that file was, to the same numbers: checked) and vocabulary, its metadata
    and rope tensors as the converter writes them from the folder's config.json with the scaling set."""
    makers = {"tiny-llama": (gguf.MODEL_ARCH.LLAMA, byte_bpe_metadata(reused("llama"), "smollm", SPECIAL), GGUF_TYPES),
              "tiny-phi3-gguf": (gguf.MODEL_ARCH.PHI3, sentencepiece_metadata(
                  reused("phi3-gguf"), "<s>", "</s>", space_prefix=True), PHI3_TYPES)}
    for out, (folder, fields) in SCALED_GGUF.items():
        arch, tokenizer, types = makers[folder]
        config = json.loads((DATA / folder / "config.json").read_text())
        set_fields(config, fields)
        kind = config["rope_parameters"]["rope_type"]
        parameters = {"llama3": llama3_parameters, "longrope": phi3_parameters}.get(kind, llama_parameters)
        dequantised = write_gguf(folder.removeprefix("tiny-"), arch, tokenizer, types=types, parameters=parameters,
                                 out=out, config=config)
        weights = safetensors.numpy.load_file(str(DATA / folder / "model.safetensors"))
        assert all(np.array_equal(dequantised[k], weights[k]) for k in weights), f"{out}: not the folder's weights"


MODERNBERT_GGUF_VOCAB = 320


def make_modernbert_gguf() -> None:
    """tiny-modernbert.gguf (as llama.cpp's ModernBERT converter writes it: nothing changed, the window,
    the global layers' period and both rotary bases in the metadata) with a byte-level vocabulary of its
    own, split as "modern-bert" with [CLS] … [SEP] around every text, for llama.cpp reads a ModernBERT's
    vocabulary only as byte-level BPE and tiny-modernbert's is WordPiece: its token table is drawn anew
    for that vocabulary's 320 tokens, its layers are the folder's. tiny-modernbert-gguf/ holds the file's
    dequantised weights and that tokenizer.json: transformers 5.24 reads no "modern-bert" GGUF."""
    tokenizer = byte_bpe_tokenizer(MODERNBERT_GGUF_VOCAB, digits=False, specials=WORDPIECE_SPECIALS,
                                   around=("[CLS]", "[SEP]"))
    width = json.loads((DATA / "tiny-modernbert" / "config.json").read_text())["hidden_size"]
    metadata = byte_bpe_metadata(tokenizer, "modern-bert", "[SEP]", bos="[CLS]", pad="[PAD]")
    dequantised = write_gguf("modernbert", gguf.MODEL_ARCH.MODERN_BERT, metadata,
                             types={**GGUF_TYPES, "attn_qkv": Q.Q4_0, "ffn_up": Q.Q4_1},
                             parameters=modernbert_parameters, layout=token_table(MODERNBERT_GGUF_VOCAB, width))
    save_dequantised("modernbert", ModernBertModel, dequantised, tokenizer, vocab_size=MODERNBERT_GGUF_VOCAB,
                     ignore_mismatched_sizes=True)


def make_mistral_gguf() -> None:
    """tiny-mistral.gguf: a Mistral as llama.cpp converts one, a "llama" file (no sliding window:
    llama.cpp's Llama has none) with its SentencePiece-style vocabulary (a space in front); transformers
    reads it itself (its GGUF loader, which un-permutes W_Q and W_K)."""
    write_gguf("mistral", gguf.MODEL_ARCH.LLAMA,
               sentencepiece_metadata(reused("mistral"), "<s>", "</s>", space_prefix=True))


PHI3_TYPES = {**GGUF_TYPES, "attn_qkv": Q.Q4_0, "ffn_up": Q.Q4_1}  # its fused matrices too


def make_phi3_gguf() -> None:
    """tiny-phi3.gguf with a SentencePiece-style tokenizer (a space in front, as Phi-3's), and
    tiny-phi3-gguf/ holding its dequantised weights: transformers' GGUF loader does not read
    `phi3.rope.dimension_count`, so it would turn the whole head where this model turns 3/4 of it
    (and it cannot build this model at all: Phi3Config's default padding id, 32000, is past its tokens)."""
    tokenizer = sentencepiece_tokenizer(["<unk>", "<s>", "</s>"], "<s>", 320)
    dequantised = write_gguf("phi3", gguf.MODEL_ARCH.PHI3,
                             sentencepiece_metadata(tokenizer, "<s>", "</s>", space_prefix=True),
                             types=PHI3_TYPES, parameters=phi3_parameters)
    save_dequantised("phi3", Phi3ForCausalLM, dequantised, tokenizer)


def make_gpt2_gguf() -> None:
    """tiny-gpt2.gguf (its Conv1D weights transposed as llama.cpp's GPT-2 converter stores them, its
    tokenizer byte-level BPE after GPT-2's own split, "gpt-2", trained for it: tiny-gpt2's splits digits
    too, which is SmolLM2's "smollm"), and tiny-gpt2-gguf/ holding its dequantised weights: transformers
    5.24's GGUF loader reads `gpt2.context_length` as `n_ctx` and leaves `n_positions`, the size of the
    position table, at 1,024, so it cannot load this file's table of 64."""
    tokenizer = byte_bpe_tokenizer(320, digits=False)
    dequantised = write_gguf("gpt2", gguf.MODEL_ARCH.GPT2, byte_bpe_metadata(tokenizer, "gpt-2", SPECIAL),
                             types={**GGUF_TYPES, "attn_qkv": Q.Q4_0, "ffn_up": Q.Q4_1}, parameters=gpt2_parameters,
                             layout=transposed({"attn_qkv", "attn_output", "ffn_up", "ffn_down"}))
    save_dequantised("gpt2", GPT2LMHeadModel, dequantised, tokenizer)


def make_gpt_neox_gguf() -> None:
    """tiny-gpt-neox.gguf (q, k, v regrouped as llama.cpp's GPT-NeoX converter stores them, RoPE over
    4 of each head's 8 dims, a byte-level tokenizer after GPT-2's split, named "olmo" as a Pythia
    file's is), and tiny-gpt-neox-gguf/ holding its dequantised weights: transformers 5.24 has no GGUF
    loader for "gptneox"."""
    tokenizer = byte_bpe_tokenizer(320, digits=False)
    heads = json.loads((DATA / "tiny-gpt-neox" / "config.json").read_text())["num_attention_heads"]
    dequantised = write_gguf("gpt-neox", gguf.MODEL_ARCH.GPTNEOX, byte_bpe_metadata(tokenizer, "olmo", SPECIAL),
                             types={**GGUF_TYPES, "attn_qkv": Q.Q4_0, "ffn_up": Q.Q4_1},
                             parameters=gpt_neox_parameters, layout=grouped_qkv(heads))
    save_dequantised("gpt-neox", GPTNeoXForCausalLM, dequantised, tokenizer)


def make_olmo2_gguf() -> None:
    """tiny-olmo2.gguf (as llama.cpp's converter writes any Llama-like model, q and k as they are; its
    tokenizer byte-level BPE after cl100k_base's split, "dbrx", as OLMo 2's), and tiny-olmo2-gguf/
    holding its dequantised weights: transformers 5.24 has no GGUF loader for "olmo2"."""
    tokenizer = qwen_tokenizer(320, CL100K_SPLIT)
    dequantised = write_gguf("olmo2", gguf.MODEL_ARCH.OLMO2, byte_bpe_metadata(tokenizer, "dbrx", SPECIAL))
    save_dequantised("olmo2", Olmo2ForCausalLM, dequantised, tokenizer)


def sentencepiece_tokenizer(specials: list[str], bos: str, vocab_size: int, gemma: bool = False) -> Tokenizer:
    """A SentencePiece-style BPE like Mistral's (or with `gemma`, Gemma's): spaces become ▁ (Mistral's
    also one in front of the text, Gemma's not), the merges are trained on the sentences, and a
    character the vocabulary lacks falls back to its bytes (<0x00> … <0xFF>); `bos` is put in front
    of every text. Gemma's is set up as transformers' GemmaTokenizer sets it up."""
    learner = Tokenizer(models.BPE())
    learner.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never" if gemma else "first")
    learner.train_from_iterator(SENTENCES * 3, trainers.BpeTrainer(vocab_size=vocab_size - len(specials) - 256,
                                                                   show_progress=False))
    learned = json.loads(learner.to_str())["model"]
    vocab = {token: i for i, token in enumerate(specials)}
    vocab.update({f"<0x{byte:02X}>": len(specials) + byte for byte in range(256)})
    for token, _ in sorted(learned["vocab"].items(), key=lambda item: item[1]):
        vocab.setdefault(token, len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in learned["merges"]]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", byte_fallback=True,
                                     fuse_unk=True))
    if gemma:
        tokenizer.normalizer = normalizers.Replace(" ", "▁")
        tokenizer.pre_tokenizer = pre_tokenizers.Split(pattern=" ", behavior="merged_with_previous", invert=False)
        tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
        tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                               decoders.Strip(" ", 1, 0)])
    tokenizer.post_processor = processors.TemplateProcessing(single=f"{bos} $A", special_tokens=[(bos, vocab[bos])])
    tokenizer.add_special_tokens([AddedToken(t, special=True) for t in specials])
    return tokenizer


def roberta_tokenizer(vocab_size: int) -> Tokenizer:
    """RoBERTa's kind: byte-level BPE with <s> … </s> around the text; <pad> is id 1."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tokenizer.train_from_iterator(SENTENCES * 3, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    tokenizer.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0), add_prefix_space=False)
    return tokenizer


def reused(name: str) -> Tokenizer:
    """The committed tokenizer.json of tiny-`name`, for a family whose tokenizer is of the same kind."""
    return Tokenizer.from_file(str(DATA / f"tiny-{name}" / "tokenizer.json"))


QK_NORM_SCALE = 2.0  # Qwen3's and OLMo 2's q/k norm weights: at about 1 their normalised q and k give flat attention

# The sizes every tiny decoder shares: 2 layers of 4 query heads over 2 key/value heads, width 32.
DECODER = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "intermediate_size": 64, "max_position_embeddings": 64, "initializer_range": SPREAD}
BYTE_BPE_IDS = {"bos_token_id": 0, "eos_token_id": 0, "pad_token_id": None}  # <|endoftext|> is id 0


def make(config, model_class, tokenizer: Tokenizer, name: str, norm_centre: float = 1.0) -> None:
    model = model_class(config)
    randomise(model, norm_centre)
    with torch.no_grad():  # q/k norm scales of about 1 would leave the tests a flat attention to compare
        for param_name, param in model.named_parameters():
            if param_name.endswith(("q_norm.weight", "k_norm.weight")):  # the scale (w + 1 − centre) × the factor
                param.add_(1 - norm_centre).mul_(QK_NORM_SCALE).sub_(1 - norm_centre)
    save(model, tokenizer, DATA / f"tiny-{name}")


def make_qwen2() -> None:
    make(Qwen2Config(vocab_size=320, rope_theta=100000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
                     **DECODER, **BYTE_BPE_IDS), Qwen2ForCausalLM, reused("llama"), "qwen2")


def make_mistral() -> None:
    tokenizer = sentencepiece_tokenizer(["<unk>", "<s>", "</s>"], "<s>", 400)
    make(MistralConfig(vocab_size=tokenizer.get_vocab_size(), sliding_window=4, head_dim=8, rms_norm_eps=1e-5,
                       tie_word_embeddings=True, bos_token_id=1, eos_token_id=2, **DECODER),
         MistralForCausalLM, tokenizer, "mistral")


def make_qwen3() -> None:
    make(Qwen3Config(vocab_size=320, head_dim=16, rope_theta=100000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
                     **DECODER, **BYTE_BPE_IDS), Qwen3ForCausalLM, reused("llama"), "qwen3")


def make_phi3() -> None:
    make(Phi3Config(vocab_size=320, partial_rotary_factor=0.75, rms_norm_eps=1e-5, tie_word_embeddings=True,
                    **DECODER, **BYTE_BPE_IDS), Phi3ForCausalLM, reused("llama"), "phi3")


def make_olmo2() -> None:
    make(Olmo2Config(vocab_size=320, rope_theta=100000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
                     **DECODER, **BYTE_BPE_IDS), Olmo2ForCausalLM, reused("llama"), "olmo2")


def make_gpt_neox() -> None:
    sizes = {k: v for k, v in DECODER.items() if k != "num_key_value_heads"}
    make(GPTNeoXConfig(vocab_size=320, rotary_pct=0.5, rotary_emb_base=10000, use_parallel_residual=True,
                       layer_norm_eps=1e-5, tie_word_embeddings=False, **sizes, **BYTE_BPE_IDS),
         GPTNeoXForCausalLM, reused("llama"), "gpt-neox")


GEMMA_SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]


def make_gemma() -> None:
    tokenizer = sentencepiece_tokenizer(GEMMA_SPECIALS, "<bos>", 400, gemma=True)
    make(GemmaConfig(vocab_size=tokenizer.get_vocab_size(), head_dim=16, hidden_act="gelu_pytorch_tanh",
                     rms_norm_eps=1e-6, **{**DECODER, "num_key_value_heads": 1}),
         GemmaForCausalLM, tokenizer, "gemma", norm_centre=0.0)


def make_gemma2() -> None:
    tokenizer = sentencepiece_tokenizer(GEMMA_SPECIALS, "<bos>", 400, gemma=True)
    make(Gemma2Config(vocab_size=tokenizer.get_vocab_size(), head_dim=8, query_pre_attn_scalar=12,
                      attn_logit_softcapping=5.0, final_logit_softcapping=3.0, sliding_window=4, rms_norm_eps=1e-6,
                      **DECODER),
         Gemma2ForCausalLM, tokenizer, "gemma2", norm_centre=0.0)


def make_gemma3() -> None:
    """Three layers, sliding, global, sliding (a window of 4 tokens), the sliding ones turned with base
    100 and the global one with base 100,000 and a linear factor of 4."""
    kinds = ["sliding_attention", "full_attention", "sliding_attention"]
    rope = {"sliding_attention": {"rope_type": "default", "rope_theta": 100.0},
            "full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 100000.0}}
    make(Gemma3TextConfig(vocab_size=reused("gemma").get_vocab_size(), head_dim=8, query_pre_attn_scalar=12,
                          sliding_window=4, layer_types=kinds, rope_parameters=rope, rms_norm_eps=1e-6,
                          **{**DECODER, "num_hidden_layers": 3}),
         Gemma3ForCausalLM, reused("gemma"), "gemma3", norm_centre=0.0)


def make_roberta() -> None:
    tokenizer = roberta_tokenizer(320)
    config = RobertaConfig(vocab_size=tokenizer.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=64, max_position_embeddings=66,
                           type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2, layer_norm_eps=1e-5,
                           initializer_range=SPREAD)
    model = RobertaModel(config, add_pooling_layer=False)
    randomise(model)
    save(model, tokenizer, DATA / "tiny-roberta")


def make_distilbert() -> None:
    tokenizer = reused("bert")
    make(DistilBertConfig(vocab_size=tokenizer.get_vocab_size(), dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                          max_position_embeddings=64, initializer_range=SPREAD), DistilBertModel, tokenizer,
         "distilbert")


def make_modernbert() -> None:
    """Three layers, global, local (a window reaching 2 tokens either way), global, their rotary bases
    100,000 and 100; biases on the attention and the feed-forward, none on the LayerNorms (as released)."""
    tokenizer = reused("bert")
    make(ModernBertConfig(vocab_size=tokenizer.get_vocab_size(), hidden_size=32, num_hidden_layers=3,
                          num_attention_heads=4, intermediate_size=64, max_position_embeddings=64,
                          global_attn_every_n_layers=2, local_attention=4, global_rope_theta=100000.0,
                          local_rope_theta=100.0, attention_bias=True, mlp_bias=True, norm_bias=False,
                          pad_token_id=0, bos_token_id=2, cls_token_id=2, eos_token_id=3, sep_token_id=3,
                          initializer_range=SPREAD), ModernBertModel, tokenizer, "modernbert")


MAKERS = {"bert": make_bert, "gpt2": make_gpt2, "llama": make_llama, "qwen2": make_qwen2, "mistral": make_mistral,
          "qwen3": make_qwen3, "phi3": make_phi3, "olmo2": make_olmo2, "gpt-neox": make_gpt_neox, "gemma": make_gemma,
          "gemma2": make_gemma2, "gemma3": make_gemma3, "roberta": make_roberta, "distilbert": make_distilbert,
          "modernbert": make_modernbert,
          # each GGUF file from its folder, so after it
          "qwen2-gguf": make_qwen2_gguf, "qwen3-gguf": make_qwen3_gguf, "gemma-gguf": make_gemma_gguf,
          "gemma2-gguf": make_gemma2_gguf, "phi3-gguf": make_phi3_gguf, "mistral-gguf": make_mistral_gguf,
          "gpt2-gguf": make_gpt2_gguf, "gpt-neox-gguf": make_gpt_neox_gguf,
          "olmo2-gguf": make_olmo2_gguf, "gemma3-gguf": make_gemma3_gguf,
          "bert-gguf": make_bert_gguf, "roberta-gguf": make_roberta_gguf, "modernbert-gguf": make_modernbert_gguf,
          "scaled-gguf": make_scaled_gguf}


# BART's queries × this: at the others' spread its attention is so peaked (three sub-layers in each decoder
# layer) that float32's rounding alone, transformers' own against float64, comes near the tests' 1e-5
BART_QUERY_SCALE = 0.5


def make_bart() -> None:
    """tiny-bart/: BART (BartForConditionalGeneration) with tiny-roberta's tokenizer.json (BART's is the
    same byte-level kind, <s> … </s> around a text), its embeddings scaled by √d_model, a decoder of its
    own sizes (8 heads and a feed-forward of 48 where the encoder has 4 and 64) and a final_logits_bias
    drawn like a bias, so that each of them shows in the parity tests."""
    from transformers import BartConfig, BartForConditionalGeneration

    tokenizer = reused("roberta")
    config = BartConfig(vocab_size=tokenizer.get_vocab_size(), d_model=32, encoder_layers=2, decoder_layers=2,
                        encoder_attention_heads=4, decoder_attention_heads=8, encoder_ffn_dim=64, decoder_ffn_dim=48,
                        max_position_embeddings=64, scale_embedding=True, pad_token_id=1, bos_token_id=0,
                        eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2, init_std=SPREAD)
    model = BartForConditionalGeneration(config)
    randomise(model)
    with torch.no_grad():
        for name, param in model.named_parameters():  # see BART_QUERY_SCALE
            if "q_proj" in name:
                param.mul_(BART_QUERY_SCALE)
        noise = torch.randn(model.final_logits_bias.shape, generator=torch.Generator().manual_seed(SEED))
        model.final_logits_bias.copy_(0.1 * noise)  # a buffer, not a parameter: randomise leaves it at zero
    save(model, tokenizer, DATA / "tiny-bart")


MAKERS["bart"] = make_bart


if __name__ == "__main__":
    DATA.mkdir(exist_ok=True)
    for name in sys.argv[1:] or MAKERS:
        MAKERS[name]()
    for path in sorted(DATA.rglob("*")):
        if path.is_file():
            print(f"{path.relative_to(DATA)}: {path.stat().st_size / 1024:.0f} KiB")
