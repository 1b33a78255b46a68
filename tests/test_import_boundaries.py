"""The package's layers stay apart: the engine and the data export never load Qt, views never reach
into the lessons, only the launcher reaches the main window, and the data commands start without Qt.

Checked twice: statically (every module's imports, parsed, followed through the package) and by
running fresh interpreters that import or run the code and then look at what was loaded.
"""

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import attention_explorer

PACKAGE = Path(attention_explorer.__file__).parent
NAME = "attention_explorer"
QT_PACKAGES = ("PySide6", "shiboken6", "pyqtgraph", "PyQt5", "PyQt6")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(module: str) -> set[str]:
    """Every module `module` imports anywhere in its text (also inside functions), as absolute names."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES)
    return found


def reachable(start: str) -> set[str]:
    """`start` and every module of the package it imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(name for name in imports_of(module) if name in MODULES)
        # importing a.b.c runs a/__init__ and a/b/__init__ too
        parts = module.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in MODULES)
    return seen


def is_qt(name: str) -> bool:
    return name.split(".")[0] in QT_PACKAGES


PURE = sorted(name for name in MODULES if name.startswith(f"{NAME}.engine")) + [f"{NAME}.export", f"{NAME}.cli"]
# the figures' data half: what a figure shows and carries, read and written without Qt
PURE += [f"{NAME}.{m}" for m in ("figure_state", "figure_options", "figure_text", "figure_metadata", "figure_command",
                                  "svg_fixes", "html_figure", "view_file", "model_hash")]


def test_the_module_list_found_the_package():
    assert f"{NAME}.engine.attention" in MODULES and f"{NAME}.export" in MODULES and len(MODULES) > 40


@pytest.mark.parametrize("module", [m for m in PURE if m != f"{NAME}.cli"])
def test_the_engine_and_the_data_export_import_no_qt_even_through_other_modules(module):
    offenders = {f"{inner} imports {name}" for inner in reachable(module) for name in imports_of(inner) if is_qt(name)}
    assert not offenders, f"{module} would load Qt: {sorted(offenders)}"


def test_the_command_line_imports_qt_only_inside_the_functions_that_render_or_open_the_window():
    """At the top of cli.py (what every command runs) nothing leads to Qt; images and the window import
    their modules when they are asked for."""
    tree = ast.parse(MODULES[f"{NAME}.cli"].read_text(encoding="utf-8"))
    top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = set()
    for node in top:
        if isinstance(node, ast.ImportFrom) and node.level:
            names.add(f"{NAME}.{node.module}" if node.module else NAME)
            names.update(f"{NAME}.{node.module}.{a.name}" if node.module else f"{NAME}.{a.name}" for a in node.names)
    modules = {name for name in names if name in MODULES}
    loaded = set().union(*(reachable(m) for m in modules))
    qt = {f"{inner} imports {name}" for inner in loaded for name in imports_of(inner) if is_qt(name)}
    assert not qt, f"the command line loads Qt at start: {sorted(qt)}"


def test_views_do_not_import_the_lessons():
    offenders = {(view, name) for view in MODULES if view.startswith(f"{NAME}.views")
                 for name in imports_of(view) if name.startswith(f"{NAME}.labs")}
    assert not offenders, f"views import lessons: {sorted(offenders)}"


def test_only_the_launcher_imports_the_main_window_and_nothing_imports_the_source_folder():
    main_window = f"{NAME}.app"
    importers = {module for module in MODULES if main_window in imports_of(module) and module != main_window}
    assert importers <= {f"{NAME}.application"}, f"modules importing the main window: {sorted(importers)}"
    source_folder = {module for module in MODULES for name in imports_of(module) if name.split(".")[0] == "app"}
    assert not source_folder, f"modules importing the source folder 'app': {sorted(source_folder)}"


LOADED_QT = f"""
import sys
loaded = sorted(name for name in sys.modules if name.split(".")[0] in {QT_PACKAGES!r})
print(",".join(loaded))
"""


def test_a_fresh_interpreter_imports_every_engine_module_and_the_data_export_without_qt():
    engine_modules = [m for m in PURE if m != f"{NAME}.cli"]
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in engine_modules) + (
        "from attention_explorer import engine, export\n"
        "m = engine.load_builtin(engine.catalog.DEFAULT_MODEL)\n"
        "t = engine.run(m, m.default_sentence)\n"
        "export.trace_to_json(t); export.matrix_to_csv(t, 'weights')\n") + LOADED_QT
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"Qt was loaded: {result.stdout}"


def command_line() -> list[str]:
    """The installed console script when there is one, run by this Python so -X works on it."""
    script = shutil.which("attention-explorer")
    return [sys.executable, "-X", "importtime", *([script] if script else ["-m", NAME])]


@pytest.mark.parametrize("argv", [
    ["--version"],
    ["models"],
    ["trace", "--sentence", "the cat sat"],
    ["trace", "-o", "t.json"],
    ["export", "--matrix", "scores", "-o", "m.csv"],
    ["export", "-o", "-"],
    ["scaling", "--trials", "10"],
])
def test_the_data_commands_never_import_pyside6(argv, tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPROFILEIMPORTTIME"}
    result = subprocess.run([*command_line(), *argv], capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    log = [line for line in result.stderr.splitlines() if line.startswith("import time:")]
    imported = {line.rsplit("|", 1)[-1].strip() for line in log}
    assert f"{NAME}.cli" in imported  # the import log is there: the check below means something
    qt = sorted(name for name in imported if is_qt(name))
    assert not qt, f"`attention-explorer {' '.join(argv)}` imported {qt}"
