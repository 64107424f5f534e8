//! The one narrowing model: which of the registry's tools a run may show the model and run.
//!
//! Every rule that refuses a tool — the host allow-list ([`RunPolicy::allowed_tools`]), the
//! allow-list middleware, policy classification with `strict` and `refuse_destructive`, a host
//! predicate — is a [`Rule`]. The agent evaluates the rules **once per run**, at its start, into
//! a [`Surface`]; every model-facing view reads that surface and nothing else: the Direct
//! array, the `tool_search` manifest, search results, promotion (searched, pre-promoted, or
//! after a rejected call), resume, unknown-tool suggestions, the names text recovery may
//! accept, execution, and MCP `tools/list`. A refused tool is therefore absent everywhere at
//! once, exactly like a Hidden one: calling it gets the unknown-tool answer.
//!
//! Two kinds of narrowing stay outside the rules, and can only ever subtract:
//! - per-turn selection (`ContextualToolSelectionMiddleware`, `DynamicToolSelectionMiddleware`,
//!   any `before_model`) shapes one request's tools array, a wire-size optimisation over what
//!   the surface allows;
//! - per-call gates (`HostAuthorization`, any `before_tool`) may refuse one call.
//!
//! [`RunPolicy::allowed_tools`]: crate::RunPolicy::allowed_tools
//!
//! ```
//! use tinytools::surface::{Rule, Subject, Surface, Verdict};
//! use tinytools::{ToolRegistry, tool};
//!
//! /// Read a note.
//! #[tool(read_only)]
//! async fn read_note(/** The title. */ title: String) -> String { title }
//!
//! /// Delete a note for good.
//! #[tool(exposure = "deferred", destructive)]
//! async fn delete_note(/** The title. */ title: String) {}
//!
//! let mut registry = ToolRegistry::new();
//! registry.register(ReadNote)?.register(DeleteNote)?;
//!
//! // A host predicate: nothing destructive in this run.
//! let safe = |subject: Subject<'_>| subject.tool().is_none_or(|tool| !tool.annotations().destructive);
//! let surface = Surface::new(&registry, &[&safe as &dyn Rule]);
//! assert!(surface.admits("read_note"));
//! assert!(!surface.admits("delete_note"));
//! assert_eq!(surface.deferred().count(), 0);
//! assert!(surface.refusal("delete_note").is_some()); // the reason, for the host only
//! # Ok::<(), tinytools::RegistryError>(())
//! ```

mod rules;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

pub use rules::AllowList;

use crate::tool::{TOOL_SEARCH, ToolSpec};
use crate::{RegisteredTool, SchemaCompaction, ToolExposure, ToolRegistry, ToolSchema};

/// What a [`Rule`] judges: a registered tool, or the intrinsic discovery bridge
/// (`tool_search`, which is never registered).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Subject<'a> {
    /// A registered tool, Direct or Deferred (Hidden tools are never shown to rules: they are
    /// out of every surface already).
    Tool(&'a RegisteredTool),
    /// The intrinsic `tool_search`.
    Bridge,
}

impl Subject<'_> {
    /// The name the model would see.
    pub fn name(&self) -> &str {
        match self {
            Self::Tool(tool) => tool.name(),
            Self::Bridge => TOOL_SEARCH,
        }
    }

    /// The registered tool, or `None` for the bridge.
    pub fn tool(&self) -> Option<&RegisteredTool> {
        match self {
            Self::Tool(tool) => Some(tool),
            Self::Bridge => None,
        }
    }
}

/// A rule's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The rule has nothing against it.
    Allow,
    /// Refused, with the reason (for the host's events; the model never reads it).
    Deny(String),
}

impl Verdict {
    /// Whether this is [`Verdict::Allow`].
    pub fn is_allow(&self) -> bool {
        matches!(self, Self::Allow)
    }
}

/// One rule that narrows what a run may show and run. Evaluated once per run for every
/// Direct and Deferred tool, and for the bridge; a tool is admitted when every rule allows it.
///
/// A closure `Fn(Subject<'_>) -> bool` is a rule (`false` denies, with a generic reason).
pub trait Rule: Send + Sync {
    /// Judges one tool (or the bridge).
    fn admit(&self, subject: Subject<'_>) -> Verdict;
}

impl<F: Fn(Subject<'_>) -> bool + Send + Sync> Rule for F {
    fn admit(&self, subject: Subject<'_>) -> Verdict {
        if self(subject) { Verdict::Allow } else { Verdict::Deny("refused by a host rule".to_owned()) }
    }
}

/// One admitted tool, as every view of the run borrows it: the registry's declaration and
/// [`ToolSpec`], shared, not copied.
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceTool {
    schema: Arc<ToolSchema>,
    spec: Arc<ToolSpec>,
    /// Its family's description, for ranking only.
    family_description: Option<Arc<str>>,
}

impl SurfaceTool {
    pub(crate) fn new(schema: Arc<ToolSchema>, spec: Arc<ToolSpec>) -> Self {
        Self { schema, spec, family_description: None }
    }

    /// A registered tool with its family's description.
    pub(crate) fn of(registry: &ToolRegistry, tool: &RegisteredTool) -> Self {
        Self {
            family_description: registry.shared_family_description(tool.family()),
            ..Self::new(tool.shared_schema(), tool.shared_spec())
        }
    }

    /// Its facts, as the registry holds them.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// Its canonical declaration (admission validates against it).
    pub fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    /// The declaration as the registry shares it: the same allocation in every surface built
    /// from one registry, so a ranker can tell a tool it has seen without reading it again.
    pub fn shared_schema(&self) -> &Arc<ToolSchema> {
        &self.schema
    }

    /// Direct or Deferred.
    pub fn exposure(&self) -> ToolExposure {
        self.spec.exposure
    }

    /// Its family.
    pub fn family(&self) -> Option<&str> {
        self.spec.family.as_deref()
    }

    /// Its family's description ([`ToolRegistry::describe_family`]): what discovery ranks with
    /// beside the tool's own text. Never shown to the model.
    pub fn family_description(&self) -> Option<&str> {
        self.family_description.as_deref()
    }

    /// The family description, shared.
    pub(crate) fn shared_family_description(&self) -> Option<&Arc<str>> {
        self.family_description.as_ref()
    }

    /// Its own schema budget.
    pub fn compaction(&self) -> Option<SchemaCompaction> {
        self.spec.compaction
    }
}

/// Why a Deferred tool named `tool_search` is refused (for the host's events).
pub const DEFERRED_TOOL_SEARCH: &str = "`tool_search` is the discovery bridge's name: a host's own `tool_search` replaces the \
     bridge only when it is Direct; register it Direct, or under another name";

/// The tools a run may show and run: the registry's Direct and Deferred tools that every rule
/// admits, and whether the rules admit the bridge. Computed once, read by every view.
#[derive(Clone, Default, PartialEq)]
pub struct Surface {
    admitted: BTreeMap<String, SurfaceTool>,
    refused: BTreeMap<String, String>,
    bridge_refused: Option<String>,
}

impl Surface {
    /// Evaluates `rules` over `registry`: every Direct and Deferred tool, and the bridge.
    /// Hidden tools are never admitted and never shown to a rule.
    pub fn new(registry: &ToolRegistry, rules: &[&dyn Rule]) -> Self {
        let mut surface = Self::default();
        let judge = |subject: Subject<'_>| {
            rules.iter().find_map(|rule| match rule.admit(subject) {
                Verdict::Allow => None,
                Verdict::Deny(reason) => Some(reason),
            })
        };
        for tool in registry.iter().filter(|tool| tool.exposure().is_model_callable()) {
            // The spec lets a host's own `tool_search` replace the bridge; only a Direct one can
            // (a Deferred one would switch the bridge off and be unreachable behind it).
            if tool.name() == TOOL_SEARCH && tool.exposure() == ToolExposure::Deferred {
                surface.refused.insert(TOOL_SEARCH.to_owned(), DEFERRED_TOOL_SEARCH.to_owned());
                continue;
            }
            match judge(Subject::Tool(tool)) {
                None => {
                    let admitted = SurfaceTool::of(registry, tool);
                    surface.admitted.insert(tool.name().to_owned(), admitted);
                }
                Some(reason) => {
                    surface.refused.insert(tool.name().to_owned(), reason);
                }
            }
        }
        surface.bridge_refused = judge(Subject::Bridge);
        surface
    }

    /// Every Direct and Deferred tool admitted, the bridge too: no rules.
    pub fn all(registry: &ToolRegistry) -> Self {
        Self::new(registry, &[])
    }

    /// The admitted tool of that name.
    pub fn get(&self, name: &str) -> Option<&SurfaceTool> {
        self.admitted.get(name)
    }

    /// Whether the model may call `name` (a Direct or Deferred tool every rule admits).
    pub fn admits(&self, name: &str) -> bool {
        self.admitted.contains_key(name)
    }

    /// The exposure of an admitted tool.
    pub fn exposure(&self, name: &str) -> Option<ToolExposure> {
        self.get(name).map(SurfaceTool::exposure)
    }

    /// Why a registered, non-Hidden tool was refused: for the host's events, never the model.
    pub fn refusal(&self, name: &str) -> Option<&str> {
        self.refused.get(name).map(String::as_str)
    }

    /// Whether the rules admit the intrinsic `tool_search` (whether it is advertised also
    /// depends on the discovery policy and the catalogue).
    pub fn admits_bridge(&self) -> bool {
        self.bridge_refused.is_none()
    }

    /// Why the rules refused the bridge, if they did.
    pub fn bridge_refusal(&self) -> Option<&str> {
        self.bridge_refused.as_deref()
    }

    /// The admitted Direct tools, name-sorted.
    pub fn direct(&self) -> impl Iterator<Item = &SurfaceTool> {
        self.of(ToolExposure::Direct)
    }

    /// The admitted Deferred tools, name-sorted.
    pub fn deferred(&self) -> impl Iterator<Item = &SurfaceTool> {
        self.of(ToolExposure::Deferred)
    }

    fn of(&self, exposure: ToolExposure) -> impl Iterator<Item = &SurfaceTool> {
        self.admitted.values().filter(move |tool| tool.exposure() == exposure)
    }
}

impl fmt::Debug for Surface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Surface")
            .field("direct", &self.direct().count())
            .field("deferred", &self.deferred().count())
            .field("refused", &self.refused.len())
            .field("bridge", &self.admits_bridge())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Tool, ToolResult};

    struct Named(&'static str, ToolExposure);

    #[async_trait::async_trait]
    impl Tool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            "A tool."
        }
        fn parameters_schema(&self) -> serde_json::Value {
            serde_json::json!({"type": "object"})
        }
        fn exposure(&self) -> ToolExposure {
            self.1
        }
        async fn execute(&self, _args: serde_json::Value) -> anyhow::Result<ToolResult> {
            Ok(ToolResult::text("ok"))
        }
    }

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new();
        for (name, exposure) in
            [("a", ToolExposure::Direct), ("b", ToolExposure::Deferred), ("h", ToolExposure::Hidden)]
        {
            registry.register(Named(name, exposure)).map(|_| ()).unwrap_or_else(|e| panic!("{e}"));
        }
        registry
    }

    #[test]
    fn hidden_tools_are_never_admitted_nor_judged() {
        let seen = std::sync::Mutex::new(Vec::new());
        let spy = |subject: Subject<'_>| {
            seen.lock().map(|mut s| s.push(subject.name().to_owned())).unwrap_or(());
            true
        };
        let surface = Surface::new(&registry(), &[&spy]);
        assert_eq!(seen.lock().map(|s| s.clone()).unwrap_or_default(), ["a", "b", "tool_search"]);
        assert!(surface.admits("a") && surface.admits("b") && !surface.admits("h"));
        assert!(surface.refusal("h").is_none(), "a Hidden tool is not 'refused': it was never there");
    }

    #[test]
    fn the_first_refusing_rule_gives_the_reason_and_every_rule_must_allow() {
        let no_b = |subject: Subject<'_>| subject.name() != "b";
        let allow_list = AllowList::new(["a", "b"]).covering_bridge(true);
        let surface = Surface::new(&registry(), &[&no_b, &allow_list]);
        assert_eq!(surface.direct().map(|t| t.schema().name.as_str()).collect::<Vec<_>>(), ["a"]);
        assert_eq!(surface.deferred().count(), 0);
        assert_eq!(surface.refusal("b"), Some("refused by a host rule"));
        assert!(!surface.admits_bridge());
        assert!(surface.bridge_refusal().is_some_and(|reason| reason.contains("allow-list")));
    }
}
