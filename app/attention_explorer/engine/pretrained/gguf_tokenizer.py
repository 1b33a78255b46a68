"""The tokenizer a GGUF file describes in its `tokenizer.ggml.*` metadata, rebuilt for `tokenizers` so
that it gives the tokens llama.cpp gives (llama-vocab.cpp).

Three kinds (`tokenizer.ggml.model`):
- "gpt2", byte-level BPE (GPT-2, Pythia, Qwen, SmolLM2, OLMo 2, Llama 3, RoBERTa, ModernBERT): the
  file's merges after the split its `tokenizer.ggml.pre` names (PRE_TOKENIZERS); a split not known
  here is refused.
  The BOS before a text and the EOS after it only where `add_bos_token` and `add_eos_token` say so
  (a RoBERTa file says both: <s> … </s>; a ModernBERT one [CLS] … [SEP]).
- "llama", SentencePiece-style BPE (Gemma, Phi-3, Mistral, Llama 2): spaces become ▁, with one in
  front of the text and of every text after a special token when `add_space_prefix` (default true);
  no split: the pair of neighbours whose joined text is the token of the highest score is joined
  first (`tokenizer.ggml.scores`), until no pair joins; a character no token holds is its UTF-8 bytes
  (<0x41>). That is BPE with a merge for each way a token splits into two tokens, ranked by the
  token's score (how transformers converts these files too).
- "bert", WordPiece (BERT): the file holds each word-starting piece as "▁piece" and each piece
  that continues a word bare ("##ing" is "ing"); the text is decomposed (NFD) and lowercased, its
  control characters dropped, split at spaces, punctuation and CJK characters, and each word, "▁"
  in front, is cut into the longest pieces from its start, the whole word [UNK] when a piece is
  missing; [CLS] before it all and [SEP] after. That is llama.cpp's, not quite BERT's own: accents
  are kept (an uncased BERT strips them: "café" is "cafe" there, and an [UNK] or other pieces
  here), a cased BERT is lowercased too, and a word is never too long (BERT's is [UNK] past 100
  characters): a GGUF file says none of these.
In all, control and unknown tokens (types 3 and 2) are special, and user-defined ones (type 4:
Qwen's <think>) are matched whole wherever the text has them, as llama.cpp matches them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import ModelError
from ..limits import max_text_chars
from .dependencies import require
from .fields import Fields, shown
from .gguf_reader import Texts

# How llama.cpp splits a text before byte-level BPE, by `tokenizer.ggml.pre`: the split of the
# tokenizer.json the file was converted from, named, not stored. Each is written as that
# tokenizer.json has it, which is what llama.cpp's hand-written regexes match:
#   "gpt-2", "olmo", "roberta-bpe": GPT-2's rule (the ByteLevel pre-tokenizer's own; "olmo" is OLMo 1's
#       vocabulary, GPT-NeoX-20B's, which Pythia's is too: llama.cpp's converter names a split by the
#       tokens the vocabulary gives on a test text, so a Pythia file says "olmo"; "roberta-bpe" is
#       RoBERTa's, GPT-2's vocabulary with its own specials; "modern-bert" ModernBERT's, OLMo's with its own);
#   "smollm", "starcoder", "refact": every digit on its own, then GPT-2's rule;
#   "qwen2": Qwen2's rule (transformers' Qwen2Tokenizer; llama.cpp spells its (?i:'s|…) out as '[sS]|…);
#   "dbrx": cl100k_base's rule, Qwen2's with numbers of up to three digits (DBRX's vocabulary, and
#       OLMo 2's, cl100k_base's with tokens of its own; llama.cpp gives it Llama 3's regex, but not
#       Llama 3's "llama-bpe" habit of taking a word the vocabulary holds whole, unmerged).
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
CL100K_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
PRE_TOKENIZERS = {"gpt-2": "gpt2", "olmo": "gpt2", "roberta-bpe": "gpt2", "modern-bert": "gpt2", "smollm": "digits",
                  "starcoder": "digits", "refact": "digits", "qwen2": QWEN2_SPLIT, "dbrx": CL100K_SPLIT}

# tokenizer.ggml.token_type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte
_UNKNOWN, _CONTROL, _USER_DEFINED = 2, 3, 4


def gguf_tokenizer_builder(metadata: dict, file_name: str) -> Callable:
    """Every field checked, the function that builds the `tokenizers.Tokenizer` (called inside the
    guard that turns the library's failures into a ModelError)."""
    tk = require("tokenizers", "reading a real model's tokenizer")
    meta = Fields(metadata, file_name, "metadata field")
    kind = meta.raw("tokenizer.ggml.model", default=None)
    if not (isinstance(kind, str) and kind in ("gpt2", "llama", "bert")):
        raise ModelError(f"{file_name}: 'tokenizer.ggml.model' is {shown(kind)}; only byte-level BPE ('gpt2'), "
                         f"SentencePiece-style ('llama') and WordPiece ('bert') tokenizers are supported in GGUF files")
    sentencepiece, wordpiece = kind == "llama", kind == "bert"
    pre = _pre_tokenizer(meta) if kind == "gpt2" else None
    tokens = _tokens(meta)
    types = _token_types(meta)[:len(tokens)]
    specials = [tokens[i] for i in np.flatnonzero((types == _CONTROL) | (types == _UNKNOWN))]
    added = [tokens[i] for i in np.flatnonzero(types == _USER_DEFINED)]
    # around each text: llama.cpp puts a BOS in front of a SentencePiece vocabulary's texts unless the
    # file says not to, and an EOS after a BPE one's where it says to (RoBERTa's <s> … </s>); [CLS] and
    # [SEP] around a WordPiece one's whatever it says (ids by default bert-base's, as llama.cpp's)
    before, after = (), ()
    if wordpiece:
        before = (_token_id(meta, "tokenizer.ggml.bos_token_id", len(tokens), 101),)
        after = (_token_id(meta, "tokenizer.ggml.seperator_token_id", len(tokens), 102),)
    else:
        if meta.flag("tokenizer.ggml.add_bos_token", default=sentencepiece):  # SentencePiece's BOS is 1 unless named
            before = (_token_id(meta, "tokenizer.ggml.bos_token_id", len(tokens), 1 if sentencepiece else None),)
        if meta.flag("tokenizer.ggml.add_eos_token", default=False):
            after = (_token_id(meta, "tokenizer.ggml.eos_token_id", len(tokens), None),)
    if sentencepiece or wordpiece:
        unknown = _token_id(meta, "tokenizer.ggml.unknown_token_id", len(tokens), 100 if wordpiece else 0)
    if sentencepiece:
        scores = _scores(meta, len(tokens))
        space_prefix = meta.flag("tokenizer.ggml.add_space_prefix", default=True)
    elif not wordpiece:
        merges = _merges(meta)

    def build():
        vocab = {t: i for i, t in enumerate(tokens)}
        if sentencepiece:
            tokenizer = tk.Tokenizer(tk.models.BPE(vocab=vocab, merges=_merges_by_score(tokens, scores, vocab),
                                                   unk_token=tokens[unknown], byte_fallback=True, fuse_unk=True))
            spaces = tk.normalizers.Replace(" ", "▁")
            tokenizer.normalizer = (tk.normalizers.Sequence([tk.normalizers.Prepend("▁"), spaces]) if space_prefix
                                    else spaces)  # a normalizer sees each text between special tokens on its own
            tokenizer.decoder = tk.decoders.Sequence(
                [tk.decoders.Replace("▁", " "), tk.decoders.ByteFallback(), tk.decoders.Fuse()]
                + ([tk.decoders.Strip(" ", 1, 0)] if space_prefix else []))
        elif wordpiece:  # continuing pieces have no prefix of their own: the word's first piece has "▁"
            tokenizer = tk.Tokenizer(tk.models.WordPiece(vocab=vocab, unk_token=tokens[unknown],
                                                         continuing_subword_prefix="",
                                                         max_input_chars_per_word=max_text_chars(real=True)))
            tokenizer.normalizer = tk.normalizers.Sequence([tk.normalizers.NFD(), tk.normalizers.BertNormalizer(
                clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=True)])
            metaspace = {"replacement": "▁", "prepend_scheme": "always", "split": False}
            tokenizer.pre_tokenizer = tk.pre_tokenizers.Sequence(
                [tk.pre_tokenizers.BertPreTokenizer(), tk.pre_tokenizers.Metaspace(**metaspace)])
            tokenizer.decoder = tk.decoders.Metaspace(**metaspace)
        else:
            tokenizer = tk.Tokenizer(tk.models.BPE(vocab=vocab, merges=merges))
            gpt2 = pre in ("gpt2", "digits")  # GPT-2's rule is the ByteLevel pre-tokenizer's own regex
            byte_level = tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=gpt2)
            first = (None if pre == "gpt2" else tk.pre_tokenizers.Digits(individual_digits=True) if pre == "digits"
                     else tk.pre_tokenizers.Split(tk.Regex(pre), behavior="isolated"))
            tokenizer.pre_tokenizer = byte_level if first is None else tk.pre_tokenizers.Sequence([first, byte_level])
            tokenizer.decoder = tk.decoders.ByteLevel()
        tokenizer.add_special_tokens([tk.AddedToken(s, special=True, normalized=False) for s in specials])
        tokenizer.add_tokens([tk.AddedToken(t, special=False, normalized=False) for t in added])
        if before or after:
            tokenizer.post_processor = tk.processors.TemplateProcessing(
                single=" ".join([*(tokens[i] for i in before), "$A", *(tokens[i] for i in after)]),
                special_tokens=[(tokens[i], i) for i in before + after])
        return tokenizer

    return build


def _merges_by_score(tokens: list[str], scores: np.ndarray, vocab: dict[str, int]) -> list[tuple[str, str]]:
    """Every way each token splits into two tokens, the highest-scoring token's first (for tokens of
    equal score, the longer left part first, as transformers orders them)."""
    merges = []
    for token, score in zip(tokens, scores.tolist(), strict=True):
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in vocab and right in vocab:
                merges.append((-score, -len(left), -len(right), left, right))
    merges.sort(key=lambda merge: merge[:3])  # stable: a token's own splits stay in the order found
    return [(left, right) for *_, left, right in merges]


def _pre_tokenizer(meta: Fields) -> str:
    """How the text is split before BPE (PRE_TOKENIZERS' value). A split not known here is refused: with
    another one the same text would give other tokens than llama.cpp gives (llama.cpp itself falls
    back to a "default" split of its own when the field is missing, and warns that it degrades)."""
    pre = meta.text("tokenizer.ggml.pre") if meta.present("tokenizer.ggml.pre") else None
    if pre not in PRE_TOKENIZERS:
        said = "missing" if pre is None else f"{shown(pre)}"
        raise ModelError(f"{meta.file_name}: metadata field 'tokenizer.ggml.pre' (how the text is split before its "
                         f"tokens are found) is {said}; the splits known here are "
                         f"{', '.join(repr(name) for name in PRE_TOKENIZERS)}, and another would give other tokens "
                         f"than llama.cpp does")
    return PRE_TOKENIZERS[pre]


def _tokens(meta: Fields) -> list[str]:
    """The tokens' texts, decoded (once the vocabulary's size is checked against the embedding's)."""
    tokens = meta.raw("tokenizer.ggml.tokens")
    if not isinstance(tokens, Texts) or not tokens:
        raise meta.wrong(("tokenizer.ggml.tokens",), "must be a list of the tokens' texts", tokens)
    return list(tokens)


def _token_types(meta: Fields) -> np.ndarray:
    types = meta.raw("tokenizer.ggml.token_type", default=np.zeros(0, np.int32))
    whole = (types.dtype.kind in "iu" if isinstance(types, np.ndarray) else
             isinstance(types, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in types))
    if not whole:
        raise meta.wrong(("tokenizer.ggml.token_type",), "must be a list of whole numbers", types)
    return np.asarray(types, dtype=np.int64)


def _token_id(meta: Fields, name: str, count: int, default: int | None) -> int:
    """A token's id (`default` when the field is absent; None: it must be there)."""
    token = meta.count(name, minimum=0) if default is None else meta.count(name, default=default, minimum=0)
    if token >= count:
        raise meta.wrong((name,), f"must be a token (below {count:,})", token)
    return token


def _scores(meta: Fields, count: int) -> np.ndarray:
    """A SentencePiece vocabulary's score of each token, finite numbers, one per token."""
    scores = meta.raw("tokenizer.ggml.scores")
    if not (isinstance(scores, np.ndarray) and scores.dtype.kind == "f" and len(scores) == count
            and np.isfinite(scores).all()):
        raise meta.wrong(("tokenizer.ggml.scores",), f"must be a finite number for each of the {count:,} tokens",
                         scores)
    return scores


def _merges(meta: Fields) -> list[tuple[str, str]]:
    """BPE's merges, each "left right" in the file."""
    merges = meta.raw("tokenizer.ggml.merges")
    if not isinstance(merges, Texts) or not merges:
        raise meta.wrong(("tokenizer.ggml.merges",), "must be a list of merges", merges)
    pairs = []
    for index, merge in enumerate(merges):
        if " " not in merge:
            raise ModelError(f"{meta.file_name}: merge {index + 1:,} of 'tokenizer.ggml.merges' is {shown(merge)}, "
                             f"not two tokens separated by a space")
        left, right = merge.split(" ", 1)
        pairs.append((left, right))
    return pairs
