//! [`ToolSpec`]: the facts about a tool, in one place.

use std::borrow::Cow;

use crate::SchemaCompaction;

use super::{Grounding, Tool, ToolAnnotations, ToolExposure};

/// The facts about a tool other than its schema: its name, description, [exposure](ToolExposure),
/// family, [side effects](ToolAnnotations) and [schema budget](SchemaCompaction).
///
/// One fact sheet per tool: a [`TypedTool`](super::TypedTool) states its facts as a
/// `ToolSpec`, the registry reads every tool's once at registration (with the exposure
/// [`register_as`](crate::ToolRegistry::register_as) gave it) and every view — the tools array,
/// the discovery catalogue, search, policy middleware, MCP export — reads the registry's
/// (`registry.get(name)?.spec()`), so they cannot disagree.
///
/// The builders are `const`, so a tool's spec can be a `static`:
///
/// ```
/// use tinytools::{ToolAnnotations, ToolExposure, ToolSpec};
///
/// static QUOTE: ToolSpec = ToolSpec::new("stock_quote", "Fetch the latest price for a ticker symbol.")
///     .with_exposure(ToolExposure::Deferred)
///     .with_family("finance")
///     .with_annotations(ToolAnnotations::READ_ONLY);
///
/// assert_eq!(QUOTE.name, "stock_quote");
/// assert_eq!(QUOTE.family.as_deref(), Some("finance"));
/// // Names known only at run time (an MCP server's tools) take the owned form.
/// let remote = ToolSpec::owned(format!("{}__{}", "time", "now"), String::from("The current time."));
/// assert_eq!(remote.exposure, ToolExposure::Direct);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls it by: `^[A-Za-z0-9_-]{1,64}$`, unique in a registry.
    pub name: Cow<'static, str>,
    /// What the tool does, for the model; a Deferred tool's first sentence is its manifest line.
    pub description: Cow<'static, str>,
    /// How the tool is exposed. Default: [`ToolExposure::Direct`].
    pub exposure: ToolExposure,
    /// A group name that discovery indexes (`"finance"`, an MCP server's name).
    pub family: Option<Cow<'static, str>>,
    /// What calling it does to the world. Default: [`ToolAnnotations::UNCLASSIFIED`].
    pub annotations: ToolAnnotations,
    /// The tool's own schema budget, over the run's default.
    pub compaction: Option<SchemaCompaction>,
    /// The arguments whose values must come from the conversation ([`Grounding`]).
    pub grounding: &'static [Grounding],
    /// The tool blocks its thread (CPU work, blocking I/O): the run calls it on tokio's
    /// blocking pool, and it is the one kind of tool a timeout or cancellation cannot stop
    /// mid-way (see [`Tool::blocking`]). Default: `false`.
    pub blocking: bool,
}

impl ToolSpec {
    /// A Direct tool with no family, unclassified side effects and no budget of its own.
    pub const fn new(name: &'static str, description: &'static str) -> Self {
        Self {
            name: Cow::Borrowed(name),
            description: Cow::Borrowed(description),
            exposure: ToolExposure::Direct,
            family: None,
            annotations: ToolAnnotations::UNCLASSIFIED,
            compaction: None,
            grounding: &[],
            blocking: false,
        }
    }

    /// [`new`](Self::new) for a name and description made at run time.
    pub fn owned(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self { name: Cow::Owned(name.into()), description: Cow::Owned(description.into()), ..Self::new("", "") }
    }

    /// The facts a [`Tool`] states through its methods.
    pub fn of(tool: &dyn Tool) -> Self {
        Self {
            name: Cow::Owned(tool.name().to_owned()),
            description: Cow::Owned(tool.description().to_owned()),
            exposure: tool.exposure(),
            family: tool.family().map(|family| Cow::Owned(family.to_owned())),
            annotations: tool.annotations(),
            compaction: tool.schema_compaction(),
            grounding: tool.grounding(),
            blocking: tool.blocking(),
        }
    }

    /// Sets the exposure.
    #[must_use]
    pub const fn with_exposure(mut self, exposure: ToolExposure) -> Self {
        self.exposure = exposure;
        self
    }

    /// Sets the family.
    #[must_use]
    pub const fn with_family(mut self, family: &'static str) -> Self {
        // A `const fn` may not drop the old value (it may own a `String`); a spec built by
        // these builders never does, and forgetting one that does only leaks it.
        std::mem::forget(self.family.replace(Cow::Borrowed(family)));
        self
    }

    /// Sets the side-effect classification.
    #[must_use]
    pub const fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the tool's own schema budget.
    #[must_use]
    pub const fn with_compaction(mut self, compaction: SchemaCompaction) -> Self {
        self.compaction = Some(compaction);
        self
    }

    /// Sets the arguments whose values must come from the conversation.
    ///
    /// ```
    /// use tinytools::{Grounding, ToolSpec};
    ///
    /// static LOG_CALL: ToolSpec = ToolSpec::new("crm_log_call", "Log a phone call with a contact.")
    ///     .with_grounding(&[Grounding::new("contact_id").with_sources(&["crm_find_contact"])]);
    /// assert_eq!(LOG_CALL.grounding[0].sources, ["crm_find_contact"]);
    /// ```
    #[must_use]
    pub const fn with_grounding(mut self, grounding: &'static [Grounding]) -> Self {
        self.grounding = grounding;
        self
    }

    /// Sets whether the tool blocks its thread (see [`blocking`](Self::blocking)); what
    /// `#[tool(blocking)]` writes.
    ///
    /// ```
    /// use tinytools::ToolSpec;
    ///
    /// static RESIZE: ToolSpec = ToolSpec::new("resize_image", "Resize an image file.").with_blocking(true);
    /// assert!(RESIZE.blocking && !ToolSpec::new("now", "The time.").blocking);
    /// ```
    #[must_use]
    pub const fn with_blocking(mut self, blocking: bool) -> Self {
        self.blocking = blocking;
        self
    }
}
