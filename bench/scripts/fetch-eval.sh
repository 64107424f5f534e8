#!/usr/bin/env bash
# Fetches the public tool-retrieval eval sets for the tests and benchmarks that read them, into
# DIR ($1, default bench/eval-data in this checkout, which git ignores), and prints the
# TINYTOOLS_EVAL_DIR=... line to use. Needs python3 with pip; reaches nothing but PyPI.
#
#   bench/scripts/fetch-eval.sh                 # then, e.g.:
#   TINYTOOLS_EVAL_DIR=$PWD/bench/eval-data cargo test --workspace
#
# (The tests also look in bench/eval-data by themselves when TINYTOOLS_EVAL_DIR is unset and
# there is no ../shared/eval beside the checkout.)
#
# What it writes, one JSON object a line, the format tinytools_examples::eval reads:
#   DIR/bfcl/tools.jsonl     {id, name, description, parameters, origins}
#   DIR/bfcl/queries.jsonl   {qid, query, gold, category, candidates}
#
# - BFCL (Berkeley Function Calling Leaderboard v4, Apache-2.0): from the bfcl-eval wheel on
#   PyPI, at the version bench/bfcl/setup.sh pins for BFCL's checker, downloaded with
#   --no-deps into a temporary directory and checked against its sha256. Nothing is installed;
#   bench/scripts/bfcl_eval_set.py reads the wheel's data and writes the dev half by the rule
#   tinytools_bench::bfcl::in_dev_half states (a query id whose sha256 hex digest starts with
#   0-7). From bfcl-eval 2026.3.23 the two files are byte for byte those of the workplace's
#   shared/eval/bfcl (3,420 tools, 1,287 queries), so figures measured on either agree.
# - MetaTool (MIT, HowieHwong/MetaTool): not on PyPI (the PyPI package named `metatool` is an
#   unrelated tool), so this script cannot fetch it. Place it by hand as
#   DIR/metatool/tools.jsonl ({id, name, description, parameters}) and
#   DIR/metatool/queries.jsonl ({qid, query, gold, split}); the tests that need it skip until then.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${1:-$root/bench/eval-data}
version=$(sed -n 's/^version=//p' "$root/bench/bfcl/setup.sh")
# The sha256 of bfcl_eval-2026.3.23-py3-none-any.whl; a new pin in setup.sh needs a new one here.
wheel_sha256=3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a
if [[ $version != 2026.3.23 ]]; then
  echo "fetch-eval: bench/bfcl/setup.sh pins bfcl-eval $version; this script knows 2026.3.23's sha256 only" >&2
  exit 1
fi
python3 -m pip --version >/dev/null 2>&1 || { echo "fetch-eval: needs python3 with pip (python3 -m pip)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-eval: downloading bfcl-eval $version (--no-deps) from PyPI" >&2
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  -d "$tmp" "bfcl-eval==$version" >&2
wheel="$tmp/bfcl_eval-$version-py3-none-any.whl"
[[ -f $wheel ]] || { echo "fetch-eval: pip did not leave $wheel" >&2; exit 1; }
got=$(python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$wheel")
if [[ $got != "$wheel_sha256" ]]; then
  echo "fetch-eval: $wheel has sha256 $got, expected $wheel_sha256" >&2
  exit 1
fi

mkdir -p "$tmp/bfcl"
python3 "$root/bench/scripts/bfcl_eval_set.py" "$wheel" "$tmp/bfcl"
cat >"$tmp/bfcl/SOURCE.txt" <<EOF
BFCL v4 (Berkeley Function Calling Leaderboard, ShishirPatil/gorilla), Apache-2.0.
From the PyPI wheel bfcl_eval-$version-py3-none-any.whl (sha256 $wheel_sha256)
by bench/scripts/fetch-eval.sh: the whole catalogue and the dev half of the queries.
EOF
mkdir -p "$out"
rm -rf "$out/bfcl"
mv "$tmp/bfcl" "$out/bfcl"
echo "fetch-eval: wrote $out/bfcl" >&2

if [[ -f $out/metatool/tools.jsonl && -f $out/metatool/queries.jsonl ]]; then
  echo "fetch-eval: $out/metatool is there (placed by hand)" >&2
else
  echo "fetch-eval: MetaTool is not on PyPI: place its set by hand as $out/metatool/{tools,queries}.jsonl (see this script's header); until then its tests skip" >&2
fi
out_abs=$(cd "$out" && pwd)
echo "TINYTOOLS_EVAL_DIR=$out_abs"
