"""The one place that knows where the shipped data files (toy models, icons) live.

`resources/` sits at the top of the source tree and is mapped into the package as
`attention_explorer.resources` at build time, so the same lookup works from an installed wheel,
an editable install and a PyInstaller bundle (which collects the package's data files).
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path


def resource_path(*parts: str) -> Path:
    """Absolute path of a shipped data file, e.g. ``resource_path("models", "cats-chase-mice.json")``."""
    return _root().joinpath(*parts)


@functools.cache
def _root() -> Path:
    """The folder itself, as the import system sees it: asked of the finders directly, it costs a
    fraction of a millisecond where importlib.resources.files costs a few (the splash waits for it).
    A bundle whose finder gives no folder is asked through importlib.resources."""
    spec = importlib.util.find_spec("attention_explorer.resources")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if locations:
        return Path(locations[0])
    from importlib import resources

    return Path(str(resources.files("attention_explorer.resources")))
