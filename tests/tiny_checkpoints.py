"""The tiny random checkpoints in tests/engine/pretrained/data/ (made by make_tiny_checkpoints.py beside
them), one HF folder per family, for the tests that run every family."""

ENCODERS = ["tiny-bert", "tiny-roberta", "tiny-distilbert", "tiny-modernbert"]
DECODERS = ["tiny-gpt2", "tiny-gpt-neox", "tiny-llama", "tiny-qwen2", "tiny-mistral", "tiny-qwen3", "tiny-phi3",
            "tiny-olmo2", "tiny-gemma", "tiny-gemma2", "tiny-gemma3"]
FOLDERS = ENCODERS + DECODERS
# a file our engine opens → the folder transformers reads as its reference
GGUF = {"tiny-llama.gguf": "tiny-llama"}
# GGUF files of the other architectures → (what transformers reads as the model, as the tokenizer): the
# file itself where transformers' own GGUF loader reads that architecture exactly, else a folder
# holding the file's dequantised weights (make_tiny_checkpoints.py says why, per file); for
# Gemma and BERT, which transformers cannot read from a GGUF at all, the tokenizer.json its vocabulary came
# from; for a "llama" file's SentencePiece vocabulary, transformers' tokenizer that spaces its texts
# as llama.cpp does (transformers_reference.spaced_as_llama_cpp); for a file of an architecture transformers
# reads no model of (GPT-NeoX, OLMo 2), transformers' tokenizer built from its vocabulary (built_from_gguf)
GGUF_FAMILIES = {"tiny-qwen2.gguf": ("tiny-qwen2.gguf", "tiny-qwen2.gguf"),
                 "tiny-qwen3.gguf": ("tiny-qwen3-gguf", "tiny-qwen3.gguf"),
                 "tiny-gemma.gguf": ("tiny-gemma-gguf", "tiny-gemma-gguf"),
                 "tiny-gemma2.gguf": ("tiny-gemma2-gguf", "tiny-gemma2.gguf"),
                 "tiny-phi3.gguf": ("tiny-phi3-gguf", "tiny-phi3.gguf"),
                 "tiny-mistral.gguf": ("tiny-mistral.gguf", "spaced as llama.cpp: tiny-mistral.gguf"),
                 "tiny-gpt2.gguf": ("tiny-gpt2-gguf", "tiny-gpt2.gguf"),
                 "tiny-gpt-neox.gguf": ("tiny-gpt-neox-gguf", "built from the vocabulary: tiny-gpt-neox.gguf"),
                 "tiny-olmo2.gguf": ("tiny-olmo2-gguf", "built from the vocabulary: tiny-olmo2.gguf"),
                 "tiny-gemma3.gguf": ("tiny-gemma3-gguf", "tiny-gemma3.gguf"),
                 "tiny-bert.gguf": ("tiny-bert-gguf", "tiny-bert-gguf")}
