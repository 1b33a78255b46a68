"""Build the standalone Attention Explorer with PyInstaller, from a clean tree, and say what came out.

    python packaging/build.py              one folder: dist/attention-explorer/ (+ "Attention Explorer.app" on macOS)
    python packaging/build.py --onefile    one file:   dist/attention-explorer (attention-explorer.exe on Windows)

Why not a bare `pyinstaller` call: PyInstaller reuses build/ between runs and leaves older files in dist/,
so a bundle could carry leftovers of another build. This removes both first, then prints the bundle's
size and file count (the numbers the README quotes) and how long the build took. Needs the project and its
`package` extra installed in the running Python: `python -m pip install -e ".[package]"`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "packaging" / "attention-explorer.spec"
DIST = ROOT / "dist"
NAME = "attention-explorer"


def bundle_path(onefile: bool) -> Path:
    if onefile:
        return DIST / (f"{NAME}.exe" if sys.platform == "win32" else NAME)
    if sys.platform == "darwin":
        return DIST / "Attention Explorer.app"
    return DIST / NAME


def size_and_count(path: Path) -> tuple[int, int]:
    """Bytes and number of regular files (links PyInstaller makes to libraries are not counted)."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()]
    return sum(p.stat().st_size for p in files), len(files)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--onefile", action="store_true", help="one self-extracting file instead of a folder")
    args = parser.parse_args()

    for leftover in (ROOT / "build", DIST):
        shutil.rmtree(leftover, ignore_errors=True)
    command = [sys.executable, "-m", "PyInstaller", "--noconfirm", "--log-level", "WARN",
               "--distpath", str(DIST), "--workpath", str(ROOT / "build"), str(SPEC)]
    if args.onefile:
        command += ["--", "--onefile"]
    started = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        print(f"build: PyInstaller failed (exit {result.returncode})", file=sys.stderr)
        return result.returncode

    bundle = bundle_path(args.onefile)
    size, count = size_and_count(bundle)
    files = "1 file" if count == 1 else f"{count} files"
    print(f"build: {bundle.relative_to(ROOT)}: {size / 1e6:.1f} MB ({size / 2**20:.1f} MiB) in {files}, "
          f"built in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
