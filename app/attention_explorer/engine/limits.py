"""The sizes the app accepts, in one place, so the engine, the window, the command line and the
README all say the same numbers. Each keeps every action responsive on an ordinary laptop.
"""

# Model files: a toy model is read by people, and a 10,000-feature model made every toggle of the
# window take seconds. At these sizes a full recompute of a short sentence stays a few milliseconds.
MAX_FEATURES = 512
MAX_PROJECTION_COLUMNS = 512
MAX_WORDS = 10_000
MAX_FILE_BYTES = 16 * 1024 * 1024   # a model at the limits above, written with short numbers, fits
# Model files need four levels (the object, "vocabulary", a word, its numbers); extra keys may nest
# more, but nothing real nests 64 deep, and Python's parser overflows its stack near 1,000.
MAX_JSON_DEPTH = 64

# Sentences for toy models: the n × n matrices of 1,024 words are a million cells each, already far
# more than a screen shows. Tokenising 1 MB of text takes most of a second, so a sentence is refused
# by its length in characters before it is split into words.
MAX_SENTENCE_WORDS = 1024
MAX_SENTENCE_CHARS = 32_000

# Texts for real models: an encoder reads its position table (512 tokens for BERT), a decoder its
# whole context (8,192 for SmolLM2), some 40,000 characters of ordinary text; a 10-million-character
# paste took 2 GB and 7 s to tokenise before any of it was cut. 64,000 characters leave room for a
# model that reads 8,192 tokens of text written one character a token (Chinese, say), and tokenise in
# about a tenth of a second (MiniLM's and SmolLM2's tokenizers).
MAX_REAL_TEXT_CHARS = 64_000
# A model with a longer context still reads at most this many tokens: the forward keeps every layer's
# input (layers × tokens × width: 1.1 GB for SmolLM2 here) and its time grows with tokens².
MAX_REAL_TOKENS = 16_384
# Rollout multiplies an n × n matrix into the last one for every layer (n³ work each: a second a
# layer at 2,048 tokens): offered up to this length.
ROLLOUT_MAX_TOKENS = 1024


def max_text_chars(real: bool) -> int:
    """The longest text a model takes, in characters: a real model's or a toy model's. The one rule the
    engine, the saved settings and view files follow, so a text one accepts is never refused by another."""
    return MAX_REAL_TEXT_CHARS if real else MAX_SENTENCE_CHARS

# Real-model files. A tokenizer.json is a few MB (those of 250,000-token vocabularies some 30 MB); a
# safetensors header lists each tensor in about 150 bytes, so a checkpoint of 100,000 tensors fits in 16 MB.
MAX_TOKENIZER_BYTES = 64 * 1024 * 1024
MAX_SAFETENSORS_HEADER_BYTES = 16 * 1024 * 1024
# JSON costs far more memory parsed than as text (see safe_read.json_values_at_most), so each real-model
# JSON is refused by its count of values before it is parsed: a config.json holds some 50 (a classifier's
# label names a few thousand); a safetensors header's values take at most the file's own size in memory,
# at 64 bytes each (a tiny checkpoint may still list its tensors in 1 MiB); a tokenizer.json holds 2 to 6
# per token of the model's vocabulary (a vocabulary, merges, added tokens), and `tokenizers` took 1.4 GB
# for 6 million (a 64 MB file).
MAX_CONFIG_VALUES = 200_000
JSON_VALUE_BYTES = 64
MIN_HEADER_VALUE_BUDGET = 1 << 20
TOKENIZER_VALUES_PER_TOKEN, MIN_TOKENIZER_VALUES = 16, 65_536
# A normalisation's epsilon keeps a division away from zero: real models use 1e-12 to 1e-5. A large one
# changes what the model computes, a negative or zero one can divide by zero (NaN).
MAX_NORM_EPS = 0.1
# GGUF: llama.cpp aligns tensor data to a power of two (32 by default), its files nest metadata arrays
# two deep at most (an array of arrays: 4 levels are allowed here), and tensors have at most 4 dimensions.
MAX_GGUF_ALIGNMENT = 1 << 20
MAX_GGUF_ARRAY_DEPTH = 4
MAX_GGUF_DIMS = 4
