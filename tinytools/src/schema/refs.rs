//! `$ref` resolution: inlining local references, cutting cycles, pruning unused definitions.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::node::{Slot, for_each_child, for_each_child_mut};

/// The definitions a schema's root holds (`$defs`, or draft-07 `definitions`).
pub(crate) fn definitions(root: &Value) -> Map<String, Value> {
    let mut defs = Map::new();
    for key in ["definitions", "$defs"] {
        if let Some(Value::Object(table)) = root.get(key) {
            defs.extend(table.iter().map(|(name, schema)| (name.clone(), schema.clone())));
        }
    }
    defs
}

/// The definition name a local `$ref` points at (`#/$defs/Name`, `#/definitions/Name`).
pub(crate) fn ref_target(reference: &str) -> Option<&str> {
    reference.strip_prefix("#/$defs/").or_else(|| reference.strip_prefix("#/definitions/"))
}

/// The most references expanded inside one another. A reference nested deeper becomes a
/// stand-in (see [`inline`]): a chain of definitions as long as the schema likes would
/// otherwise recurse once per link and overflow the stack.
pub(crate) const MAX_REF_DEPTH: usize = 32;

/// Roughly how many bytes of JSON inlining may copy into a schema (strings, keys and one per
/// value). Inlining duplicates each definition at every use, so a chain of definitions that
/// each use the previous one twice doubles with every link; past this budget every further
/// reference becomes a stand-in.
pub(crate) const MAX_INLINED_BYTES: usize = 256 * 1024;

/// What [`inline`] could not expand in full. Each count is of references replaced by a
/// stand-in for that reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct InlineReport {
    /// References nested more than [`MAX_REF_DEPTH`] deep.
    pub(crate) too_deep: usize,
    /// References met once [`MAX_INLINED_BYTES`] was spent.
    pub(crate) over_budget: usize,
}

impl InlineReport {
    /// Whether anything was left unexpanded for depth or size (recursion cuts do not count:
    /// they are how a recursive type is always written without references).
    pub(crate) fn truncated(&self) -> bool {
        self.too_deep + self.over_budget > 0
    }
}

/// Replaces every local `$ref` with the definition it names, and removes the definition
/// tables. Keywords beside a `$ref` are kept, overriding the definition's.
///
/// A reference that cannot be expanded in full becomes a *stand-in*: the named definition's
/// `type` and `description` and nothing else, a looser schema (admission still checks the
/// canonical one). That happens to a reference back into a definition being expanded
/// (recursion), to one nested more than [`MAX_REF_DEPTH`] deep, and to every reference met
/// once [`MAX_INLINED_BYTES`] has been copied in; the last two are counted in the returned
/// report, which [`ProviderProfile::adapt`](super::ProviderProfile::adapt) logs. An
/// unresolvable reference becomes `{}` (anything).
///
/// A definition whose expansion needed no stand-in is the same wherever it is used, so it is
/// expanded once and copied after: the work is proportional to the output, which the budget
/// bounds.
pub(crate) fn inline(root: &mut Value) -> InlineReport {
    let defs = definitions(root);
    if let Value::Object(node) = root {
        node.remove("$defs");
        node.remove("definitions");
    }
    let mut inliner = Inliner {
        defs: &defs,
        stack: Vec::new(),
        memo: HashMap::new(),
        spent: 0,
        deepest: 0,
        cuts: 0,
        report: InlineReport::default(),
    };
    inliner.node(root);
    inliner.report
}

/// A definition expanded without a stand-in: valid wherever it is used.
struct Expansion {
    value: Value,
    /// Bytes it copies in ([`json_bytes`]).
    bytes: usize,
    /// How many references deep it nests, itself included.
    depth: usize,
}

struct Inliner<'d> {
    defs: &'d Map<String, Value>,
    /// The definitions being expanded, outermost first.
    stack: Vec<&'d str>,
    memo: HashMap<&'d str, Expansion>,
    /// Bytes copied in so far.
    spent: usize,
    /// The deepest the stack has been within the current expansion.
    deepest: usize,
    /// Stand-ins made so far, for any reason: an expansion that made none is memoized.
    cuts: usize,
    report: InlineReport,
}

impl<'d> Inliner<'d> {
    fn node(&mut self, value: &mut Value) {
        let Value::Object(node) = value else { return };
        let Some(Value::String(reference)) = node.get("$ref") else {
            for_each_child_mut(node, |_, child| self.node(child));
            return;
        };
        let target = ref_target(reference).and_then(|name| self.defs.get_key_value(name));
        let mut siblings = std::mem::take(node);
        siblings.remove("$ref");
        // Siblings may hold further references, resolved where the `$ref` stands.
        for_each_child_mut(&mut siblings, |_, child| self.node(child));
        let replacement = match target {
            Some((name, definition)) => self.expand(name, definition),
            None => Value::Object(Map::new()),
        };
        let mut merged = match replacement {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        merged.extend(siblings);
        *node = merged;
    }

    /// The expansion of definition `name`, or its stand-in.
    fn expand(&mut self, name: &'d str, definition: &'d Value) -> Value {
        if self.stack.contains(&name) {
            return self.cut(definition);
        }
        if let Some(known) = self.memo.get(name) {
            if self.stack.len() + known.depth > MAX_REF_DEPTH {
                self.report.too_deep += 1;
                return self.cut(definition);
            }
            if self.spent + known.bytes > MAX_INLINED_BYTES {
                self.report.over_budget += 1;
                return self.cut(definition);
            }
            self.spent += known.bytes;
            self.deepest = self.deepest.max(self.stack.len() + known.depth);
            return known.value.clone();
        }
        if self.stack.len() >= MAX_REF_DEPTH {
            self.report.too_deep += 1;
            return self.cut(definition);
        }
        let bytes = json_bytes(definition);
        if self.spent + bytes > MAX_INLINED_BYTES {
            self.report.over_budget += 1;
            return self.cut(definition);
        }
        let (spent_before, cuts_before, deepest_before) = (self.spent, self.cuts, self.deepest);
        self.spent += bytes;
        self.stack.push(name);
        self.deepest = self.stack.len();
        let mut expanded = definition.clone();
        self.node(&mut expanded);
        self.stack.pop();
        let depth = self.deepest - self.stack.len();
        self.deepest = deepest_before.max(self.deepest);
        if self.cuts == cuts_before {
            let bytes = self.spent - spent_before;
            self.memo.insert(name, Expansion { value: expanded.clone(), bytes, depth });
        }
        expanded
    }

    /// A stand-in for a definition: its `type` and `description`, nothing else.
    fn cut(&mut self, definition: &Value) -> Value {
        self.cuts += 1;
        let mut stand_in = Map::new();
        for key in ["type", "description"] {
            if let Some(value) = definition.get(key) {
                stand_in.insert(key.to_owned(), value.clone());
            }
        }
        Value::Object(stand_in)
    }
}

/// About how many bytes `value` is as JSON: one per value, plus the length of every string
/// and key. Iterative: the value may be as deep as its author made it.
fn json_bytes(value: &Value) -> usize {
    let mut bytes = 0;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        bytes += 1;
        match value {
            Value::String(text) => bytes += text.len(),
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => {
                for (key, child) in map {
                    bytes += key.len();
                    pending.push(child);
                }
            }
            _ => {}
        }
    }
    bytes
}

/// The definitions reachable from the schema's root, outside the tables themselves.
pub(crate) fn reachable(root: &Value) -> BTreeSet<String> {
    let mut starts: Vec<&Value> = Vec::new();
    if let Value::Object(node) = root {
        for_each_child(node, |slot, child| {
            if slot != Slot::Definition {
                starts.push(child);
            }
        });
    }
    reachable_from(&definitions(root), starts)
}

/// The definitions of `defs` that `starts` reach through local `$ref`s, and `#` when one of
/// them refers to the root.
pub(crate) fn reachable_from<'a>(defs: &'a Map<String, Value>, starts: Vec<&'a Value>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut pending = starts;
    while let Some(value) = pending.pop() {
        let Value::Object(node) = value else { continue };
        match node.get("$ref").and_then(Value::as_str) {
            Some("#") => {
                seen.insert("#".to_owned());
            }
            Some(reference) => {
                if let Some(name) = ref_target(reference)
                    && seen.insert(name.to_owned())
                    && let Some(target) = defs.get(name)
                {
                    pending.push(target);
                }
            }
            None => {}
        }
        for_each_child(node, |_, child| pending.push(child));
    }
    seen
}

/// Removes definitions no reference reaches; drops an emptied table. Returns whether it
/// removed anything.
pub(crate) fn prune_unreachable(root: &mut Value) -> bool {
    let keep = reachable(root);
    let mut changed = false;
    if let Value::Object(node) = root {
        for key in ["$defs", "definitions"] {
            if let Some(Value::Object(table)) = node.get_mut(key) {
                let before = table.len();
                table.retain(|name, _| keep.contains(name));
                changed |= table.len() != before;
                if table.is_empty() {
                    node.remove(key);
                }
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::ProviderProfile;

    /// `D0` a string; each `D{i}` an object whose two properties are both `D{i-1}`.
    fn doubling_chain(links: usize) -> Value {
        let mut defs = Map::new();
        defs.insert("D0".into(), json!({"type": "string", "description": "A leaf."}));
        for i in 1..links {
            let previous = format!("#/$defs/D{}", i - 1);
            defs.insert(
                format!("D{i}"),
                json!({"type": "object", "description": format!("Level {i}."),
                    "properties": {"left": {"$ref": previous}, "right": {"$ref": previous}}}),
            );
        }
        let top = format!("#/$defs/D{}", links - 1);
        json!({"type": "object", "properties": {"top": {"$ref": top}}, "$defs": defs})
    }

    /// How many `{"type": "string", "description": "A leaf."}` the schema holds.
    fn leaves(value: &Value) -> usize {
        match value {
            Value::Object(map) if map.get("description") == Some(&json!("A leaf.")) => 1,
            Value::Object(map) => map.values().map(leaves).sum(),
            Value::Array(items) => items.iter().map(leaves).sum(),
            _ => 0,
        }
    }

    #[test]
    fn references_inline_and_recursion_is_cut() {
        let mut schema = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node", "description": "The tree."}},
            "$defs": {"Node": {"type": "object", "description": "A node.", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}
        });
        inline(&mut schema);
        assert!(schema.get("$defs").is_none());
        let root = &schema["properties"]["root"];
        assert_eq!(root["description"], "The tree.", "siblings override the definition");
        assert_eq!(root["properties"]["children"]["items"], json!({"type": "object", "description": "A node."}));
    }

    #[test]
    fn unreachable_definitions_are_pruned() {
        let mut schema = json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"type": "string"}, "Unused": {"type": "integer"}}
        });
        assert!(prune_unreachable(&mut schema));
        let kept: Vec<&String> = schema["$defs"].as_object().map(|t| t.keys().collect()).unwrap_or_default();
        assert_eq!(kept, ["A", "B"]);
        assert!(!prune_unreachable(&mut schema));
    }

    #[test]
    fn a_definition_used_twice_at_every_link_is_expanded_once_and_copied() {
        let mut schema = doubling_chain(10);
        let report = inline(&mut schema);
        assert_eq!(report, InlineReport::default(), "ten links fit the budget");
        assert_eq!(leaves(&schema), 1 << 9, "every use expanded in full");
        assert!(!schema.to_string().contains("$ref"));
    }

    #[test]
    fn a_forty_link_doubling_chain_stops_at_the_budget() {
        // Expanded in full it would hold 2^39 leaves.
        let chain = doubling_chain(40);
        let input_bytes = json_bytes(&chain);
        let mut inlined = chain.clone();
        let report = inline(&mut inlined);
        assert!(report.over_budget > 0, "{report:?}");
        assert!(json_bytes(&inlined) <= input_bytes + MAX_INLINED_BYTES, "{} bytes", json_bytes(&inlined));
        for profile in [ProviderProfile::GEMINI, ProviderProfile::PORTABLE] {
            let adapted = profile.adapt(&chain);
            let text = adapted.to_string();
            assert!(text.len() < 4 * MAX_INLINED_BYTES, "{}: {} bytes", profile.name, text.len());
            assert!(!text.contains("$ref"), "{}", profile.name);
            assert!(profile.check(&adapted).is_empty(), "{}: {:?}", profile.name, profile.check(&adapted));
            // Cut references keep what their definition is.
            assert!(text.contains("Level 39."), "{}", profile.name);
        }
    }

    /// How deep `value` nests, in JSON objects and arrays.
    fn nesting(value: &Value) -> usize {
        match value {
            Value::Object(map) => 1 + map.values().map(nesting).max().unwrap_or(0),
            Value::Array(items) => 1 + items.iter().map(nesting).max().unwrap_or(0),
            _ => 0,
        }
    }

    #[test]
    fn self_references_and_long_cycles_do_not_overflow_the_stack() {
        // A node that refers to itself from every slot, and a cycle through 10,000 definitions.
        let links = 10_000;
        let mut defs = Map::new();
        defs.insert(
            "Node".into(),
            json!({"type": "object", "description": "A node.", "properties": {
                "next": {"$ref": "#/$defs/Node"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                "either": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                "ring": {"$ref": "#/$defs/R0"}}}),
        );
        for i in 0..links {
            let next = format!("#/$defs/R{}", (i + 1) % links);
            defs.insert(format!("R{i}"), json!({"type": "object", "properties": {"next": {"$ref": next}}}));
        }
        let schema = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/Node"}}, "$defs": defs});
        let mut inlined = schema.clone();
        let report = inline(&mut inlined);
        assert_eq!(report.too_deep, 1, "the ring is cut at the depth limit: {report:?}");
        assert!(nesting(&inlined) <= 4 * MAX_REF_DEPTH, "{}", nesting(&inlined));
        let node = &inlined["properties"]["root"];
        assert_eq!(node["properties"]["next"], json!({"type": "object", "description": "A node."}));
        for profile in [ProviderProfile::GEMINI, ProviderProfile::PORTABLE] {
            let adapted = profile.adapt(&schema);
            assert!(!adapted.to_string().contains("$ref"), "{}", profile.name);
            assert!(profile.check(&adapted).is_empty(), "{}", profile.name);
        }
    }
}
