#!/usr/bin/env python3
"""Where each aid acted in a `live_tasks` run, and what those tasks scored.

    python3 bench/scripts/aids_acted.py RUN.json [RUN.json ...] [--against STANDARD.json]

For each run (a `live_tasks --json` output), every aid that acted, in how many tasks, and how
many of those tasks were solved: an aid that did not act in a task cannot have changed it, so
"solved where it acted" bounds what the aid can have gained on that run. With `--against` (a
run of another preset over the same tasks), the tasks one run solved and the other did not,
and which aids acted in them.

Runs record `aids_acted` per task. Runs made before that field existed are read from their
`--transcripts` file (RUN.transcripts beside RUN.json) by the text each aid writes.
"""
import collections, json, os, sys

# The opening words of what each aid writes (tinytools/src/run/aids/), for old transcripts.
# Only replay_repeats, stop_repeats and ask_after_empty_reply are still in the crate; the others
# left it on 2026-12-07 (issue 64; their code is at 98b66be) and stay here to read older runs.
REPLAYED = "You already made this exact call in this conversation and it worked"
FEEDBACK = [("The same tool call has returned the same result several times", "stop_repeats"),
            ("Answer the user now in plain text.", "ask_after_empty_reply"),
            ("Your reply named", "adopt_prose_calls"),
            ("Your reply described", "nudge_described_calls")]
ANSWER_FROM_RESULT = "The tool has answered (above)."


def from_transcript(messages):
    acted, replayed = set(), False
    for m in messages:
        role, text = m.get("role"), m.get("content") or ""
        if role == "assistant":
            replayed = False
            if any(c["id"].startswith("adopted_") for c in m.get("tool_calls") or []):
                acted.add("adopt_prose_calls")
        elif role == "tool":
            first = text.split("\n")[0]
            if text.startswith(REPLAYED):
                acted.add("replay_repeats"); replayed = True
            elif "so it ran without" in first:
                acted.add("drop_undeclared_arguments")
            elif "holds the placeholder" in text:
                acted.add("refuse_placeholders")
        elif role == "feedback":
            if text.startswith(ANSWER_FROM_RESULT):
                acted.add("replay_repeats" if replayed else "ask_after_empty_reply")
            elif "from the user's request" in text and "Callable now" in text:
                acted.add("ask_about_unused_values")
            else:
                acted.update(name for opening, name in FEEDBACK if text.startswith(opening))
    return acted


def load(path):
    results = json.load(open(path))["arms"][0]["results"]
    transcripts = path[:-len(".json")] + ".transcripts"
    if any("aids_acted" in r for r in results):
        acted = {r["id"]: {a.split(":")[0] for a in r["aids_acted"]} for r in results}
    elif os.path.exists(transcripts):
        old = json.load(open(transcripts))["arms"][0]["results"]
        acted = {r["id"]: from_transcript(r.get("messages", [])) for r in old}
    else:
        sys.exit(f"{path}: no aids_acted and no {transcripts}")
    return {r["id"]: r["success"] for r in results}, acted


def main(args):
    against = None
    if "--against" in args:
        i = args.index("--against"); against = load(args[i + 1])[0]; args = args[:i] + args[i + 2:]
    for path in args:
        solved, acted = load(path)
        by_aid = collections.defaultdict(set)
        for task, aids in acted.items():
            for aid in aids:
                by_aid[aid].add(task)
        print(f"{path}: {sum(solved.values())}/{len(solved)} solved")
        gained = lost = set()
        if against:
            gained = {t for t in solved if solved[t] and not against.get(t, False)}
            lost = {t for t in solved if against.get(t, False) and not solved[t]}
            print(f"  solved here only: {len(gained)}, there only: {len(lost)}")
        for aid, tasks in sorted(by_aid.items()):
            line = f"  {aid:26} acted in {len(tasks):2} tasks, {sum(solved[t] for t in tasks):2} of them solved"
            if against:
                line += f"; in {len(tasks & gained)} solved here only, {len(tasks & lost)} there only"
            print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
