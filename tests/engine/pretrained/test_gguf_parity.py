"""GGUF files of the architectures beyond Llama against transformers: the tokens of several texts,
every layer's and head's attention, and a decoder's top-5 next tokens and greedy generation.

The references (tiny_checkpoints.GGUF_FAMILIES, made by make_tiny_checkpoints.py):
- tiny-qwen2.gguf: transformers reads the file itself (its own GGUF loader: config mapping, tensor
  renaming, dequantisation with the gguf package, and its tokenizer built from the metadata with
  the "qwen2" split), so nothing of ours is on the reference's side.
- tiny-qwen3.gguf: the model is the folder tiny-qwen3-gguf/, holding the file's weights dequantised
  by the gguf package: transformers 5.24 cannot read this file's model itself, as it takes a Qwen3
  GGUF's head width to be hidden size ÷ heads (8 here) and does not read `qwen3.attention.key_length`
  (16). The tokens are compared with transformers' tokenizer built from the file, as for Qwen2.
- tiny-gemma.gguf: the folder tiny-gemma-gguf/, the file's weights dequantised (its norms, stored
  as 1 + w, less 1) and tiny-gemma's tokenizer.json, whose vocabulary the file holds with scores:
  transformers 5.24 reads no "gemma" GGUF, neither its model nor its tokenizer. That tokenizer.json
  has the merges it was trained with, so it also checks that merging by the file's scores (as
  llama.cpp does) gives the same tokens.
- tiny-gemma2.gguf: the folder tiny-gemma2-gguf/, its dequantised weights (norms less 1) with
  query_pre_attn_scalar 8, the head width, by which llama.cpp scales the scores (a GGUF file does
  not hold the scalar; tiny-gemma2/ says 12); its softcaps and window of 4 come from the metadata.
  transformers' own GGUF loader takes Gemma2Config's default scalar, 256, and is 0.6 off here. The
  tokens are compared with transformers' tokenizer built from the file.
- tiny-gemma3.gguf: the folder tiny-gemma3-gguf/, its dequantised weights (norms, q/k norms too,
  less 1) read as llama.cpp reads the file, which names neither the layers' kinds nor the local
  layers' rotary base: every sixth layer global (so none of the three), the local ones turned with
  base 10,000 (tiny-gemma3/ says 100), and the scores scaled by the head width, 8 (it says 12). The
  window of 4, and the global layers' base and linear factor (not used by these three layers; see
  test_damaged_files for six) come from the metadata. transformers' own GGUF loader would take 256
  for the scale and read no rotary scaling. The tokens are compared with transformers' tokenizer
  built from the file.
- tiny-phi3.gguf: the folder tiny-phi3-gguf/ (dequantised weights): transformers' GGUF loader does
  not read `phi3.rope.dimension_count` (RoPE over 6 of each head's 8 dims here), and cannot build
  this model at all (Phi3Config's default padding id is past its 320 tokens). The tokens, from a
  SentencePiece-style vocabulary with a space in front, are compared with transformers' tokenizer
  built from the file, which puts that space after every special token too, as llama.cpp does.
- tiny-gpt2.gguf: the folder tiny-gpt2-gguf/, the file's weights dequantised and its Conv1D weights
  turned back to HF's (in, out): transformers 5.24's GGUF loader reads `gpt2.context_length` as
  `n_ctx` and keeps a position table of 1,024 rows, which this file's 64 do not fill. The tokens,
  byte-level BPE after GPT-2's own split ("gpt-2"), are compared with transformers' tokenizer built
  from the file.
- tiny-gpt-neox.gguf: the folder tiny-gpt-neox-gguf/ (dequantised weights, q, k and v regrouped back
  head by head): transformers 5.24 reads no "gptneox" GGUF. Its tokens, byte-level BPE after GPT-2's
  split (named "olmo", as a Pythia file's is), are compared with transformers' tokenizer built from
  the file's vocabulary (transformers_reference.built_from_gguf: AutoTokenizer refuses the file for
  its architecture).
- tiny-olmo2.gguf: the folder tiny-olmo2-gguf/ (dequantised weights): transformers 5.24 reads no
  "olmo2" GGUF. Its tokens, byte-level BPE after cl100k_base's split ("dbrx", as OLMo 2's), are
  compared with transformers' tokenizer built from the file's vocabulary, which maps "dbrx" to that
  split on its own.
- tiny-bert.gguf: the folder tiny-bert-gguf/ (dequantised weights) and tiny-bert's tokenizer.json,
  whose vocabulary the file holds as llama.cpp's converter rewrites it ("▁cat", "ing" for "##ing"):
  transformers 5.24 reads no "bert" GGUF, neither its model nor its tokenizer. On these texts the
  tiny vocabulary gives llama.cpp's tokens and BERT's alike: it has no piece an accent, kept by
  llama.cpp and stripped by BERT's uncased normaliser, would tell apart.
- tiny-roberta.gguf: a RoBERTa as llama.cpp's converter writes one, a "bert" file whose position table
  lacks its first padding id + 1 rows: the folder tiny-roberta-gguf/ (dequantised weights, zeros in
  the cut rows, which a text without padding does not read) and tiny-roberta's tokenizer.json
  (byte-level BPE, <s> … </s>): transformers 5.24 reads no "bert" GGUF. The attention is compared on
  a text without <pad> (RoBERTa gives a padding token the cut row; the file counts it on).
- tiny-modernbert.gguf: tiny-modernbert's layers (global, local with a window of 4, global; bases
  100,000 and 100) as llama.cpp's converter writes them, unchanged, with a byte-level vocabulary of
  its own and a token table drawn for it (llama.cpp reads a ModernBERT's vocabulary only as BPE, and
  tiny-modernbert's is WordPiece): the folder tiny-modernbert-gguf/ (dequantised weights and that
  tokenizer.json, [CLS] … [SEP]): transformers 5.24 reads no "modern-bert" GGUF.
- tiny-mistral.gguf: a Mistral as llama.cpp's converter writes one, a "llama" file (W_Q and W_K
  permuted; no sliding window, which llama.cpp's Llama does not have): transformers reads the file
  itself. Its SentencePiece-style tokens are compared with transformers' Phi-3 builder over the
  file's vocabulary (transformers_reference.spaced_as_llama_cpp): transformers' own tokenizer for a
  "llama" file adds no ▁ before a text that starts with a space nor after a special token, where
  llama.cpp does, so "  two" and "<s>the cat" give other tokens there.

The tokenizer is llama.cpp's: the text is not normalised. transformers' Qwen2Tokenizer, which a Qwen
folder's tokenizer.json is read with, puts it in NFC first, so a decomposed accent ("e" + U+0301)
gives other tokens there than in llama.cpp, in transformers' GGUF tokenizer and here.

The files with a scaled RoPE (tiny_checkpoints.SCALED_GGUF: Llama 3.1's divisors as `rope_freqs`, YaRN's
keys, Phi-3's longrope factor tensors) are compared with transformers reading the folder they were
written from with its config.json edited to that scaling, the checkpoint the file is a conversion of:
transformers' own GGUF loader reads `rope.scaling.*` only for gpt-oss, and no rope tensor at all, so it
would turn q and k of these files unscaled.

Attention is compared with transformers run in float64 on the same weights. In float32 the quantised
tiny Qwen2's second layer, whose scores reach 47, puts our weights and transformers' 1.1e-5 apart,
each 5–6e-6 from the float64 weights: two roundings of equal size, not a difference in the maths;
against float64 every file is held to 1e-5. Runs with the `reference` extra (torch, transformers, gguf).
"""

from pathlib import Path

import numpy as np
import pytest

from attention_explorer.engine.pretrained import open_pretrained
from attention_explorer.engine.pretrained.generate import GenerationSettings, generate

pytest.importorskip("tokenizers")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("gguf")
from tiny_checkpoints import GGUF_FAMILIES, SCALED_GGUF, edited_copy, set_fields  # noqa: E402
from transformers_reference import (  # noqa: E402
    built_from_gguf,
    from_gguf,
    gguf_tokenizer,
    spaced_as_llama_cpp,
    their_tokens,
)

transformers.logging.set_verbosity_error()
transformers.utils.logging.disable_progress_bar()

DATA = Path(__file__).with_name("data")
TOLERANCE = 1e-5
PROMPTS = ("The cat sat on the mat because", "Once upon a time, 2017 robots")
SPACED = "spaced as llama.cpp: "
BUILT = "built from the vocabulary: "
TEXT = "The cats were playing in the park, 2017 robots reading"
TEXTS = [
    TEXT,
    "I'LL say it's 3.14159 — or 42,000?! (maybe)",
    "le café était déjà fermé; über die Brücke 東京 🙂",
    "  two spaces, a tab\there\nand lines\n\n\nend ",
    "<think>the cat</think> sat<|im_end|><|endoftext|>",
    "<bos>the cat<eos> sat on<pad>",
    "<s>the cat</s> sat<s>  on",
    "e\u0301 is not é",  # a decomposed accent: no normalisation, as llama.cpp
]


@pytest.fixture(scope="module", params=sorted(GGUF_FAMILIES))
def pair(request):
    """(our model, transformers' model, transformers' tokenizer) for one GGUF file."""
    name, (model_source, tokenizer_source) = request.param, GGUF_FAMILIES[request.param]
    ours = open_pretrained(DATA / name)
    if model_source.endswith(".gguf"):
        model, _ = from_gguf(DATA / model_source)
    else:
        auto = transformers.AutoModelForCausalLM if ours.is_decoder else transformers.AutoModel
        model = auto.from_pretrained(str(DATA / model_source), attn_implementation="eager").eval()
    if tokenizer_source.startswith(SPACED):
        encode = spaced_as_llama_cpp(DATA / tokenizer_source.removeprefix(SPACED))
    elif tokenizer_source.startswith(BUILT):
        encode = built_from_gguf(DATA / tokenizer_source.removeprefix(BUILT))
    else:
        tokenizer = (gguf_tokenizer(DATA / tokenizer_source) if tokenizer_source.endswith(".gguf") else
                     transformers.AutoTokenizer.from_pretrained(str(DATA / tokenizer_source)))

        def encode(text):
            return tokenizer(text)["input_ids"]
    return ours, model, encode


def test_the_tokens_are_the_reference_tokenizers(pair):
    ours, _, encode = pair
    for text in TEXTS:
        assert list(ours.tokenizer.encode(text).ids) == encode(text), text


def test_every_head_and_the_next_tokens_match_transformers(pair):
    ours, model, _ = pair
    trace = ours.run(TEXT)
    reference = model.double()
    try:
        with torch.no_grad():
            out = reference(torch.tensor(trace.encoded.ids)[None], output_attentions=True)
    finally:
        model.float()
    weights = np.stack([a[0].numpy() for a in out.attentions])
    assert weights.shape == (ours.n_layers, ours.n_heads, trace.n, trace.n)
    largest = np.abs(trace.all_weights() - weights).max()
    worst = 0.0  # an encoder has no next tokens
    if ours.is_decoder:
        probabilities = out.logits[0, -1].softmax(-1).numpy()
        assert [t.token_id for t in trace.next_tokens] == list(np.argsort(probabilities)[::-1][:5])
        worst = max(abs(token.probability - probabilities[token.token_id]) for token in trace.next_tokens)
    said = f"top-5 probabilities {worst:.1e}" if ours.is_decoder else "no next tokens (an encoder)"
    print(f"{ours.name} ({ours.family}, {trace.n} tokens): attention {largest:.1e}, {said}")
    assert largest <= TOLERANCE
    assert worst <= TOLERANCE


def test_greedy_generation_writes_what_transformers_writes(pair):
    ours, model, _ = pair
    if not ours.is_decoder:
        pytest.skip("an encoder writes no tokens")
    for prompt in PROMPTS:
        result = generate(ours, prompt, GenerationSettings(tokens=20))
        theirs = their_tokens(model, result.prompt_ids, 20, ours.generation.stop_ids)
        assert [s.token_id for s in result.steps] == theirs


@pytest.mark.parametrize("name", sorted(SCALED_GGUF))
def test_a_scaled_rope_gguf_matches_transformers_on_the_checkpoint_it_was_converted_from(data, tmp_path, name):
    """Every layer's and head's attention and the top-5 next tokens on a text within the original context
    and one past it, against transformers on the folder with the scaling in its config.json, and not the
    plain file's (the scaling changes them). `-s` prints the largest differences."""
    folder, fields = SCALED_GGUF[name]
    ours = open_pretrained(DATA / name)
    plain = open_pretrained(DATA / {"tiny-llama": "tiny-llama.gguf", "tiny-phi3-gguf": "tiny-phi3.gguf"}[folder])
    reference = transformers.AutoModelForCausalLM.from_pretrained(
        str(edited_copy(data, tmp_path, folder, lambda config: set_fields(config, fields))),
        attn_implementation="eager").eval().double()
    said = []
    for text in ("The cat sat on the mat", TEXT):
        trace = ours.run(text)
        with torch.no_grad():
            out = reference(torch.tensor(trace.encoded.ids)[None], output_attentions=True)
        largest = np.abs(trace.all_weights() - np.stack([a[0].numpy() for a in out.attentions])).max()
        probabilities = out.logits[0, -1].softmax(-1).numpy()
        assert [t.token_id for t in trace.next_tokens] == list(np.argsort(probabilities)[::-1][:5])
        worst = max(abs(token.probability - probabilities[token.token_id]) for token in trace.next_tokens)
        assert largest <= TOLERANCE
        assert worst <= TOLERANCE
        assert np.abs(trace.all_weights() - plain.run(text).all_weights()).max() > 1e-2
        said.append(f"{trace.n} tokens: attention {largest:.1e}, top-5 probabilities {worst:.1e}")
    print(f"{name}: " + "; ".join(said))
