"""Errors the engine raises for bad input; their message is written for the user to read."""


class EngineError(ValueError):
    """Base of every user-facing engine error."""


class ModelError(EngineError):
    """A model file or model data is unusable; the message names the first problem by field."""


class SentenceError(EngineError):
    """The sentence gives nothing to compute (empty, or no word the model knows)."""


class OptionsError(EngineError):
    """An option does not fit the model (e.g. a head count that does not divide d_proj)."""


class ComparisonError(EngineError):
    """Two results cannot be set side by side (e.g. different numbers of words)."""
