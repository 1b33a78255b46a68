#!/usr/bin/env bash
# CI for the standalone binaries: build the one-folder bundle from a clean tree, then run the frozen
# program headless and check what it writes. Installs nothing: it runs in the environment .ci/run set
# up, which must have the project and its `package` extra installed (pip install -e ".[test,package]").
set -euo pipefail
cd "$(dirname "$0")/.."
python packaging/build.py
python packaging/smoke_test.py
