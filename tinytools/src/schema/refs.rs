//! `$ref` resolution: inlining local references, cutting cycles, pruning unused definitions.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

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

/// Replaces every local `$ref` with the definition it names, and removes the definition
/// tables. A reference back into a definition being expanded (recursion) becomes
/// `{"type": "object"}` carrying the definition's description; an unresolvable one becomes
/// `{}` (anything). Keywords beside a `$ref` are kept, overriding the definition's.
pub(crate) fn inline(root: &mut Value) {
    let defs = definitions(root);
    if let Value::Object(node) = root {
        node.remove("$defs");
        node.remove("definitions");
    }
    let mut stack = Vec::new();
    inline_node(root, &defs, &mut stack);
}

fn inline_node(value: &mut Value, defs: &Map<String, Value>, stack: &mut Vec<String>) {
    let Value::Object(node) = value else { return };
    if let Some(Value::String(reference)) = node.get("$ref") {
        let target = ref_target(reference).map(str::to_owned);
        let mut siblings = node.clone();
        siblings.remove("$ref");
        let replacement = match target {
            Some(name) if stack.contains(&name) => {
                let mut cut = json!({"type": "object"});
                if let Some(description) = defs.get(&name).and_then(|d| d.get("description")) {
                    cut["description"] = description.clone();
                }
                cut
            }
            Some(name) if defs.contains_key(&name) => {
                let mut expanded = defs[&name].clone();
                stack.push(name);
                inline_node(&mut expanded, defs, stack);
                stack.pop();
                expanded
            }
            _ => json!({}),
        };
        let mut merged = match replacement {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        for (key, sibling) in siblings {
            merged.insert(key, sibling);
        }
        *node = merged;
        // Siblings may hold further references.
        for_each_child_mut(node, |_, child| inline_node(child, defs, stack));
        return;
    }
    for_each_child_mut(node, |_, child| inline_node(child, defs, stack));
}

/// The definitions reachable from the schema's root, outside the tables themselves.
pub(crate) fn reachable(root: &Value) -> BTreeSet<String> {
    let defs = definitions(root);
    let mut seen = BTreeSet::new();
    let mut pending: Vec<&Value> = Vec::new();
    if let Value::Object(node) = root {
        for_each_child(node, |slot, child| {
            if slot != Slot::Definition {
                pending.push(child);
            }
        });
    }
    while let Some(value) = pending.pop() {
        let Value::Object(node) = value else { continue };
        if let Some(name) = node.get("$ref").and_then(Value::as_str).and_then(ref_target)
            && seen.insert(name.to_owned())
            && let Some(target) = defs.get(name)
        {
            pending.push(target);
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
    use super::*;

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
}
