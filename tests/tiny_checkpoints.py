"""The tiny random checkpoints in tests/engine/pretrained/data/ (made by make_tiny_checkpoints.py beside
them), one HF folder per family, for the tests that run every family."""

ENCODERS = ["tiny-bert", "tiny-roberta", "tiny-distilbert", "tiny-modernbert"]
DECODERS = ["tiny-gpt2", "tiny-gpt-neox", "tiny-llama", "tiny-qwen2", "tiny-mistral", "tiny-qwen3", "tiny-phi3",
            "tiny-olmo2", "tiny-gemma", "tiny-gemma2", "tiny-gemma3"]
FOLDERS = ENCODERS + DECODERS
# a file our engine opens → the folder transformers reads as its reference
GGUF = {"tiny-llama.gguf": "tiny-llama"}
