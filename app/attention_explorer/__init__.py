"""Attention Explorer: the self-attention layer of the Transformer, made visible and touchable."""

__version__ = "0.1.0"
