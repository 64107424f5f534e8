//! Visiting the subschemas of a JSON Schema node: the one place that knows where, in a
//! schema, other schemas sit.

use serde_json::{Map, Value};

/// Where a subschema sits in its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// Under `properties`: an argument (at the top level) or a field.
    Property,
    /// `items`, `prefixItems`, `additionalProperties`, `patternProperties`, `not`, `contains`.
    Nested,
    /// A branch of `anyOf`, `oneOf` or `allOf`.
    Branch,
    /// A definition under `$defs` or `definitions`.
    Definition,
}

const MAPS: [(&str, Slot); 4] = [
    ("properties", Slot::Property),
    ("patternProperties", Slot::Nested),
    ("$defs", Slot::Definition),
    ("definitions", Slot::Definition),
];
const LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SINGLES: [&str; 4] = ["items", "additionalProperties", "not", "contains"];

/// Calls `f` on every direct subschema of `node`, mutably.
pub(crate) fn for_each_child_mut(node: &mut Map<String, Value>, mut f: impl FnMut(Slot, &mut Value)) {
    for (key, slot) in MAPS {
        if let Some(Value::Object(children)) = node.get_mut(key) {
            children.values_mut().for_each(|child| f(slot, child));
        }
    }
    for key in LISTS {
        let slot = if key == "prefixItems" { Slot::Nested } else { Slot::Branch };
        if let Some(Value::Array(children)) = node.get_mut(key) {
            children.iter_mut().for_each(|child| f(slot, child));
        }
    }
    for key in SINGLES {
        match node.get_mut(key) {
            Some(child @ Value::Object(_)) => f(Slot::Nested, child),
            Some(Value::Array(children)) if key == "items" => {
                children.iter_mut().for_each(|child| f(Slot::Nested, child))
            }
            _ => {}
        }
    }
}

/// Calls `f` on every direct subschema of `node`.
pub(crate) fn for_each_child<'a>(node: &'a Map<String, Value>, mut f: impl FnMut(Slot, &'a Value)) {
    for (key, slot) in MAPS {
        if let Some(Value::Object(children)) = node.get(key) {
            children.values().for_each(|child| f(slot, child));
        }
    }
    for key in LISTS {
        let slot = if key == "prefixItems" { Slot::Nested } else { Slot::Branch };
        if let Some(Value::Array(children)) = node.get(key) {
            children.iter().for_each(|child| f(slot, child));
        }
    }
    for key in SINGLES {
        match node.get(key) {
            Some(child @ Value::Object(_)) => f(Slot::Nested, child),
            Some(Value::Array(children)) if key == "items" => children.iter().for_each(|child| f(Slot::Nested, child)),
            _ => {}
        }
    }
}

/// Applies `f` to every schema node below and including `value`, parents before children,
/// with each node's depth in objects (the root is 0; a property of the root is 1).
pub(crate) fn walk_mut(value: &mut Value, depth: usize, f: &mut impl FnMut(&mut Map<String, Value>, usize)) {
    if let Value::Object(node) = value {
        f(node, depth);
        for_each_child_mut(node, |slot, child| {
            let depth = if slot == Slot::Property { depth + 1 } else { depth };
            walk_mut(child, depth, f);
        });
    }
}
