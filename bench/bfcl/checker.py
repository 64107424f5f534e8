"""BFCL's own AST checker, served over stdin/stdout for the `bfcl` benchmark binary.

Loads `bfcl_eval.eval_checker.ast_eval.ast_checker` from the bfcl-eval wheel installed with
`--no-deps` (see setup.sh). That module imports one mapping, MODEL_CONFIG_MAPPING, from
`bfcl_eval.constants.model_config`, whose real module imports every model handler and through
them dozens of SDKs; a stub stands in for it. The stub answers `underscore_to_dot = True` for
every model, BFCL's own setting for function-calling models whose APIs forbid '.' in names
(OpenAI's among them): `math.factorial` is expected as `math_factorial`.

Protocol, one JSON object a line. The first line out: {"ready": true, "data_dir": ...,
"version": ...}. Then for each line in, {"qid", "category", "calls": [{name: {arg: value}}]},
one line out: {"qid", "valid", "error", "error_type"}. Irrelevance categories are valid when
no call was made (BFCL's rule: a decodable call there is an error). The functions and
possible answers are the wheel's own, looked up by qid.
"""

import importlib.metadata
import json
import os
import sys
import types


class _Config:
    underscore_to_dot = True
    is_fc_model = True


class _AnyModel(dict):
    def __missing__(self, key):
        return _Config()


def _load_checker():
    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = _AnyModel()
    sys.modules["bfcl_eval.constants.model_config"] = stub
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    import bfcl_eval

    data_dir = os.path.join(os.path.dirname(bfcl_eval.__file__), "data")
    return ast_checker, Language.PYTHON, data_dir


def _read_jsonl(path):
    with open(path, encoding="utf-8") as handle:
        return {row["id"]: row for row in map(json.loads, filter(str.strip, handle))}


class Wheel:
    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.prompts = {}
        self.answers = {}

    def _category(self, category):
        if category not in self.prompts:
            self.prompts[category] = _read_jsonl(os.path.join(self.data_dir, f"BFCL_v4_{category}.json"))
            answers = os.path.join(self.data_dir, "possible_answer", f"BFCL_v4_{category}.json")
            self.answers[category] = _read_jsonl(answers) if os.path.exists(answers) else {}
        return self.prompts[category], self.answers[category]

    def entry(self, category, qid):
        prompts, answers = self._category(category)
        if qid not in prompts:
            raise KeyError(f"{qid} is not in the wheel's {category} data")
        return prompts[qid], answers.get(qid)


def check(request, wheel, ast_checker, language):
    qid, category, calls = request["qid"], request["category"], request["calls"]
    if "irrelevance" in category:
        valid = len(calls) == 0
        error = [] if valid else ["Valid syntax. Successfully decode AST when it should not."]
        return {"qid": qid, "valid": valid, "error": error, "error_type": None if valid else "irrelevance_error:decoder_success"}
    prompt, answer = wheel.entry(category, qid)
    if not calls:
        return {"qid": qid, "valid": False, "error": ["No function call made."], "error_type": "ast_decoder:empty"}
    result = ast_checker(prompt["function"], calls, answer["ground_truth"], language, category, "tinytools")
    valid = bool(result["valid"])
    return {"qid": qid, "valid": valid, "error": result.get("error", []), "error_type": None if valid else result.get("error_type")}


def main():
    ast_checker, language, data_dir = _load_checker()
    wheel = Wheel(data_dir)
    version = importlib.metadata.version("bfcl-eval")
    print(json.dumps({"ready": True, "data_dir": data_dir, "version": version}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            reply = check(request, wheel, ast_checker, language)
        except Exception as error:  # the checker's own faults are a reply, not a crash
            reply = {"qid": None, "valid": False, "error": [f"checker failed: {error!r}"], "error_type": "checker_error"}
            try:
                reply["qid"] = json.loads(line).get("qid")
            except Exception:
                pass
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
