"""The numerical core: pure NumPy (float64), no Qt. A model and a sentence in, a Trace out."""

from .attention import head_columns, multi_head_attention, run, scaled_dot_product_attention
from .catalog import builtin_model_names, load_builtin, resolve_model
from .errors import EngineError, ModelError, OptionsError, SentenceError
from .model import ToyModel, load_model, model_from_dict, model_to_dict, save_model
from .options import Options
from .positional import sinusoidal_encoding
from .softmax import apply_mask, causal_mask, softmax
from .tokenizer import Tokenized, Word, nearest_words, token_labels, tokenize
from .trace import HEAD_MATRICES, HeadTrace, Trace

__all__ = [
    "HEAD_MATRICES", "EngineError", "HeadTrace", "ModelError", "Options", "OptionsError", "SentenceError",
    "ToyModel", "Tokenized", "Trace", "Word", "apply_mask", "builtin_model_names", "causal_mask",
    "head_columns", "load_builtin", "load_model", "model_from_dict", "model_to_dict", "multi_head_attention",
    "nearest_words", "resolve_model", "run", "save_model", "scaled_dot_product_attention",
    "sinusoidal_encoding", "softmax", "token_labels", "tokenize",
]
