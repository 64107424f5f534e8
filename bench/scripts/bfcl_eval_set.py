#!/usr/bin/env python3
"""BFCL's tool-retrieval set (the dev half) from the bfcl-eval wheel, in the loaders' format.

    python3 bench/scripts/bfcl_eval_set.py WHEEL OUT_DIR

Reads `bfcl_eval/data` inside WHEEL (a zip; nothing is installed or imported from it) and
writes OUT_DIR/tools.jsonl and OUT_DIR/queries.jsonl, the format
`tinytools_examples::eval` and `tinytools_bench::bfcl` read. `bench/scripts/fetch-eval.sh`
runs it; from bfcl-eval 2026.3.23 it writes byte for byte the files of the workplace's
`shared/eval/bfcl`.

The rules:
- tools.jsonl: every function definition offered by the single-turn categories (in the
  order of CATALOGUE_CATEGORIES, each file in its order) and then by the multi-turn function
  docs (files by name), one row per distinct (name, description, parameters). A name's first
  definition keeps the name as its `id`, later ones are `name#2`, `name#3`, ... Each row
  lists up to 20 `origins` (the query ids, or func-doc files, that offered it).
- queries.jsonl: the queries of QUERY_CATEGORIES in the dev half, the ids whose sha256 hex
  digest starts with 0-7 (`tinytools_bench::bfcl::in_dev_half`): `qid`, `category`, `query`
  (the first turn's user messages, joined by newlines, trimmed), `gold` (the ids of the
  functions BFCL's right answer calls, as offered with the query) and `candidates` (the ids
  of every function offered with it).
"""

import hashlib
import json
import sys
import zipfile

DATA = "bfcl_eval/data/"
QUERY_CATEGORIES = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
]
CATALOGUE_CATEGORIES = QUERY_CATEGORIES + ["irrelevance", "live_irrelevance", "live_relevance"]
MAX_ORIGINS = 20


def in_dev_half(qid):
    return hashlib.sha256(qid.encode("utf-8")).digest()[0] >> 4 < 8


def rows(wheel, name):
    try:
        text = wheel.read(DATA + name).decode("utf-8")
    except KeyError:
        sys.exit(f"bfcl_eval_set: the wheel has no {DATA}{name}: not the bfcl-eval wheel this script knows")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


class Catalogue:
    def __init__(self):
        self.tools = []
        self.by_definition = {}
        self.names = {}

    def add(self, function, origin):
        """The id of `function`'s row, made on its first sight."""
        name = function["name"]
        description = function.get("description", "")
        parameters = function.get("parameters", {})
        key = json.dumps([name, description, parameters], sort_keys=True)
        tool = self.by_definition.get(key)
        if tool is None:
            seen = self.names.get(name, 0) + 1
            self.names[name] = seen
            tool_id = name if seen == 1 else f"{name}#{seen}"
            tool = {"id": tool_id, "name": name, "description": description, "parameters": parameters, "origins": []}
            self.by_definition[key] = tool
            self.tools.append(tool)
        if origin not in tool["origins"] and len(tool["origins"]) < MAX_ORIGINS:
            tool["origins"].append(origin)
        return tool["id"]


def query_row(entry, category, ids, answer):
    first_id = {}
    for function, tool_id in zip(entry["function"], ids):
        first_id.setdefault(function["name"], tool_id)
    gold = []
    for call in answer:
        for name in call:
            if name not in first_id:
                sys.exit(f"bfcl_eval_set: {entry['id']}'s answer calls {name}, which is not offered with it")
            if first_id[name] not in gold:
                gold.append(first_id[name])
    turn = entry["question"][0] if entry["question"] else []
    text = "\n".join(message["content"] for message in turn if message["role"] == "user").strip()
    return {"qid": entry["id"], "category": category, "query": text, "gold": gold, "candidates": ids}


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bfcl_eval_set.py WHEEL OUT_DIR")
    wheel_path, out = sys.argv[1], sys.argv[2]
    catalogue = Catalogue()
    queries = []
    with zipfile.ZipFile(wheel_path) as wheel:
        for category in CATALOGUE_CATEGORIES:
            answers = {}
            if category in QUERY_CATEGORIES:
                answers = {row["id"]: row["ground_truth"] for row in rows(wheel, f"possible_answer/BFCL_v4_{category}.json")}
            for entry in rows(wheel, f"BFCL_v4_{category}.json"):
                ids = [catalogue.add(function, entry["id"]) for function in entry["function"]]
                if category in QUERY_CATEGORIES and in_dev_half(entry["id"]):
                    if entry["id"] not in answers:
                        sys.exit(f"bfcl_eval_set: {entry['id']} has no answer in the wheel")
                    queries.append(query_row(entry, category, ids, answers[entry["id"]]))
        docs = sorted(
            name[len(DATA) :]
            for name in wheel.namelist()
            if name.startswith(DATA + "multi_turn_func_doc/") and name.endswith(".json")
        )
        for doc in docs:
            for function in rows(wheel, doc):
                catalogue.add(function, doc)
    for file, items in [("tools.jsonl", catalogue.tools), ("queries.jsonl", queries)]:
        with open(f"{out}/{file}", "w", encoding="utf-8") as handle:
            for item in items:
                handle.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"bfcl: {len(catalogue.tools)} tools, {len(queries)} dev-half queries", file=sys.stderr)


if __name__ == "__main__":
    main()
