"""What an exported web page (html_figure) carries, read back as its script reads it: the labels of its
rows and columns and the matrix, decoded from its 16-bit codes (NaN where a cell is masked)."""

import base64
import json
import re
from pathlib import Path

import numpy as np

from attention_explorer.html_figure import MASKED


def page_data(path: Path) -> dict:
    """The page's data object, with "matrix" (n × nKeys, decoded) and "step" (one code's worth of value)."""
    text = path.read_text(encoding="utf-8")
    found = re.search(r"const data = (\{.*?\});\n", text)
    assert found, "the page holds no data object"
    data = json.loads(found.group(1))
    codes = np.frombuffer(base64.b64decode(data["values"]), dtype="<u2").reshape(data["n"], data["nKeys"])
    low, high = data["low"], data["high"]
    data["matrix"] = np.where(codes == MASKED, np.nan, low + codes / (MASKED - 1) * (high - low))
    data["step"] = (high - low) / (MASKED - 1)
    return data
