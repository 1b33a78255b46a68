"""The numerical core: pure NumPy (float64), no Qt. A model and a sentence in, a Trace out."""

from .attention import head_columns, multi_head_attention, run, scaled_dot_product_attention
from .catalog import builtin_model_names, load_builtin, resolve_model
from .errors import ComparisonError, EngineError, ModelError, OptionsError, SentenceError
from .lazy_exports import lazy_exports
from .limits import (
    MAX_FEATURES,
    MAX_FILE_BYTES,
    MAX_PROJECTION_COLUMNS,
    MAX_SENTENCE_CHARS,
    MAX_SENTENCE_WORDS,
    MAX_WORDS,
)
from .model import ToyModel, load_model, model_from_dict, model_to_dict, save_model
from .options import Options
from .positional import sinusoidal_encoding
from .softmax import apply_mask, causal_mask, softmax
from .tokenizer import Tokenized, Word, nearest_words, token_labels, tokenize
from .trace import HEAD_MATRICES, SQUARE_MATRICES, HeadTrace, Trace

__all__ = [
    "MAX_FEATURES", "MAX_FILE_BYTES", "MAX_PROJECTION_COLUMNS", "MAX_SENTENCE_CHARS", "MAX_SENTENCE_WORDS",
    "MAX_WORDS",
    "HEAD_MATRICES", "SQUARE_MATRICES", "EngineError", "HeadTrace", "ModelError", "Options", "OptionsError",
    "SentenceError", "ToyModel", "Tokenized", "Trace", "Word", "apply_mask", "builtin_model_names", "causal_mask",
    "head_columns", "load_builtin", "load_model", "model_from_dict", "model_to_dict", "multi_head_attention",
    "nearest_words", "resolve_model", "run", "save_model", "scaled_dot_product_attention",
    "sinusoidal_encoding", "softmax", "token_labels", "tokenize",
]
# The lessons' maths (scaling, word order, two matrices, cross-attention, additive, cost, compare),
# imported on first use: the window opens without them.
_LESSON_HOME = {
    **dict.fromkeys(["AdditiveComparison", "AdditiveParams", "additive_attention", "compare_with_dot_product",
                     "default_additive_params"], "additive"),
    **dict.fromkeys(["WeightsDifference", "compare_heads", "compare_options", "compare_sentences",
                     "weights_difference"], "compare"),
    **dict.fromkeys(["LAYER_KEYS", "TABLE_1", "LayerType", "attention_matrix_bytes", "maximum_path_length",
                     "operation_counts", "sequential_operations"], "cost"),
    **dict.fromkeys(["CrossTrace", "cross_attention"], "cross"),
    **dict.fromkeys(["SCALING_MODES", "ModeStats", "ScalingExperiment", "check_scaling_settings", "mode_divisor",
                     "scaling_experiment"], "lesson_scaling"),
    **dict.fromkeys(["OneSidedPair", "TiedComparison", "asymmetry", "compare_tied", "most_one_sided_pair",
                     "tie_keys_to_queries"], "lesson_two_matrices"),
    **dict.fromkeys(["Shuffled", "WordOrderComparison", "compare_same_words", "compare_word_orders",
                     "order_between", "shuffle_words"], "lesson_word_order"),
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _LESSON_HOME)
__all__ += ["ComparisonError", *sorted(_LESSON_HOME)]
