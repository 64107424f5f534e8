#!/usr/bin/env bash
# Installs the MCP clients nobody here wrote, pinned, for tests/clients.rs: the official
# Python SDK (PyPI `mcp`, in a virtualenv) and the MCP Inspector (npm, for its --cli mode),
# into target/clients (or $TINYTOOLS_CLIENTS_DIR). Idempotent; needs python3 (with venv) and
# npm. Then run the check with:
#   TINYTOOLS_CLIENTS=1 cargo test -p tinytools-gateway --test clients
set -euo pipefail
cd "$(dirname "$0")/../../.."
root="${TINYTOOLS_CLIENTS_DIR:-target/clients}"
mkdir -p "$root"
if [ ! -x "$root/venv/bin/python" ] || ! "$root/venv/bin/python" -c 'import mcp' 2>/dev/null; then
  python3 -m venv "$root/venv"
  "$root/venv/bin/pip" install --quiet --disable-pip-version-check mcp==2.3.0
fi
if [ ! -x "$root/npm/node_modules/.bin/mcp-inspector" ]; then
  npm install --prefix "$root/npm" --no-audit --no-fund --loglevel=error @modelcontextprotocol/inspector@2.12.0
fi
echo "clients: installed in $root"
