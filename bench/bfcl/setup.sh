#!/usr/bin/env bash
# Installs BFCL's checker and data for the `bfcl` benchmark: the bfcl-eval wheel (Apache-2.0)
# with --no-deps into a venv of its own (its full dependency list pulls torch and dozens of
# SDKs; the AST checker needs none of them). Prints the venv's python, which `bfcl --python`
# takes (or export TINYTOOLS_BFCL_PYTHON). Idempotent; the venv lives under the cache dir.
set -euo pipefail
home=${TINYTOOLS_BENCH_CACHE:-$HOME/.cache/tinytools-bench}/bfcl
version=2026.3.23
if [[ ! -x $home/venv/bin/python ]]; then python3 -m venv "$home/venv" >&2; fi
if ! "$home/venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('bfcl-eval') != '$version')" 2>/dev/null; then
  "$home/venv/bin/pip" install -q --disable-pip-version-check --no-deps "bfcl-eval==$version" >&2
fi
echo "$home/venv/bin/python"
