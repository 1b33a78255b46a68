"""The one place that knows where the shipped data files (toy models, icons) live.

`resources/` sits at the top of the source tree and is mapped into the package as
`attention_explorer.resources` at build time, so the same lookup works from an installed wheel,
an editable install and a PyInstaller bundle (which collects the package's data files).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def resource_path(*parts: str) -> Path:
    """Absolute path of a shipped data file, e.g. ``resource_path("models", "cats-chase-mice.json")``."""
    root = resources.files("attention_explorer.resources")
    return Path(str(root.joinpath(*parts)))
