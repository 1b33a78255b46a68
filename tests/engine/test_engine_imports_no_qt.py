"""The engine is pure NumPy: importing and running it must not load Qt or pyqtgraph."""

import subprocess
import sys

CHECK = """
import sys
from attention_explorer import engine
m = engine.load_builtin("cat-sat-on-mat")
engine.run(m, m.default_sentence)
loaded = [name for name in sys.modules if name.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6")]
print(",".join(loaded))
"""


def test_engine_loads_no_qt_in_a_fresh_interpreter():
    result = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"engine imported Qt modules: {result.stdout}"
