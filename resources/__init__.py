"""Data shipped with Attention Explorer: toy models, icons and desktop integration files."""
