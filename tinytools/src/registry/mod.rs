//! The [`ToolRegistry`]: every tool a host registered, with its admission validator.

mod admission;
mod dispatch;
mod error;
mod policies;
mod violation;

use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) use admission::Admission;
pub use admission::MAX_ARGUMENT_DEPTH;
pub use dispatch::Admitted;
pub use error::{RegistryError, ToolError};
pub use policies::{ToolPolicies, ToolPolicy};
pub use violation::Violation;

use crate::tool::{StateMap, ToolGroup, ToolSpec, check_family, check_tool_name};
use crate::{SchemaCompaction, Tool, ToolAnnotations, ToolExposure, ToolSchema};

/// Every tool a host registered, whatever its exposure.
///
/// - [`schemas`](Self::schemas): the Direct tools' declarations, name-sorted, byte-stable:
///   the tools array a model request starts from.
/// - [`deferred_schemas`](Self::deferred_schemas): the Deferred set, for the discovery bridge.
/// - [`dispatch`](Self::dispatch): the host path, which reaches every exposure, Hidden
///   included, after admission.
/// - [`policies`](Self::policies): the complete classification snapshot for policy middleware.
///
/// A host may register its own tool named `tool_search`; it then wins over the intrinsic
/// discovery bridge.
///
/// ```
/// use tinytools::{ToolExposure, ToolRegistry, tool};
///
/// /// Read a note by its title.
/// #[tool(read_only)]
/// async fn read_note(
///     /// The note's exact title.
///     title: String,
/// ) -> String {
///     format!("(contents of {title})")
/// }
///
/// /// Fetch the latest price for a ticker symbol.
/// #[tool(exposure = "deferred", family = "finance")]
/// async fn stock_quote(
///     /// Ticker symbol, such as ACME.
///     symbol: String,
/// ) -> f64 {
///     12.5
/// }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(ReadNote)?.register(StockQuote)?;
///
/// assert_eq!(registry.schemas().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["read_note"]);
/// assert_eq!(registry.deferred_schemas()[0].name, "stock_quote");
/// assert_eq!(registry.get("stock_quote").map(|t| t.exposure()), Some(ToolExposure::Deferred));
/// assert!(registry.register(ReadNote).is_err()); // names are unique
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    state: StateMap,
    /// Family → what its tools have in common ([`describe_family`](Self::describe_family)).
    families: BTreeMap<String, Arc<str>>,
}

/// A tool as the registry holds it: the tool, its declaration and its [`ToolSpec`], read from
/// it once at registration. Every view of the tool reads these, never the tool's own methods:
/// after [`register_as`](ToolRegistry::register_as) the spec's exposure is the one the host gave.
pub struct RegisteredTool {
    tool: Arc<dyn Tool>,
    schema: Arc<ToolSchema>,
    spec: Arc<ToolSpec>,
    admission: Admission,
}

impl RegisteredTool {
    /// The tool itself.
    pub fn tool(&self) -> &Arc<dyn Tool> {
        &self.tool
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.schema.name
    }

    /// Its canonical declaration, as registered (admission validates against this schema).
    pub fn schema(&self) -> &ToolSchema {
        &self.schema
    }

    /// The declaration, shared (cheap to clone).
    pub fn shared_schema(&self) -> Arc<ToolSchema> {
        Arc::clone(&self.schema)
    }

    /// Its facts: the one fact sheet every view of the tool reads.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// The fact sheet, shared (cheap to clone).
    pub fn shared_spec(&self) -> Arc<ToolSpec> {
        Arc::clone(&self.spec)
    }

    /// Its exposure in this registry.
    pub fn exposure(&self) -> ToolExposure {
        self.spec.exposure
    }

    /// Its family, if it has one.
    pub fn family(&self) -> Option<&str> {
        self.spec.family.as_deref()
    }

    /// Its side-effect classification.
    pub fn annotations(&self) -> ToolAnnotations {
        self.spec.annotations
    }

    /// Its own schema budget, if it declares one.
    pub fn compaction(&self) -> Option<SchemaCompaction> {
        self.spec.compaction
    }

    fn policy(&self) -> ToolPolicy {
        ToolPolicy { exposure: self.spec.exposure, annotations: self.spec.annotations }
    }
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.schema.name)
            .field("exposure", &self.spec.exposure)
            .field("family", &self.spec.family)
            .finish_non_exhaustive()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// This registry with host state every call can read: a [`State<T>`](crate::State)
    /// parameter receives it, as does [`ToolContext::state`](crate::ToolContext::state). A value
    /// shared as `Arc<T>` is found as `T` too. Add state before the tools that need it.
    #[must_use]
    pub fn with_state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.insert_state(value);
        self
    }

    /// Adds host state, as [`with_state`](Self::with_state) does, to a registry in place.
    pub fn insert_state<T: Send + Sync + 'static>(&mut self, value: T) -> &mut Self {
        self.state.insert(value);
        self
    }

    /// The host state the registry's calls read.
    pub fn state(&self) -> &StateMap {
        &self.state
    }

    /// Registers a tool. Returns the registry so registrations chain with `?`.
    ///
    /// # Errors
    /// [`RegistryError`] when the name is taken or breaks the provider rule, the family is
    /// malformed, the parameters schema is not an object schema that compiles, or the tool
    /// needs host state the registry does not have.
    pub fn register(&mut self, tool: impl Tool + 'static) -> Result<&mut Self, RegistryError> {
        self.register_arc(Arc::new(tool))
    }

    /// Registers a tool that is already shared (an MCP import, a plugin).
    ///
    /// # Errors
    /// As [`register`](Self::register).
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) -> Result<&mut Self, RegistryError> {
        let exposure = tool.exposure();
        self.register_as(tool, exposure)
    }

    /// Registers every tool of a [`ToolGroup`] (the `#[tool]` methods of a
    /// [`#[tools]`](macro@crate::tools) block), all or none: if one cannot register, none is.
    ///
    /// # Errors
    /// As [`register`](Self::register), for the first tool that cannot register.
    pub fn register_group<G: ToolGroup>(&mut self, group: G) -> Result<&mut Self, RegistryError> {
        self.register_group_arc(Arc::new(group))
    }

    /// [`register_group`](Self::register_group) for a group the host also keeps a handle to.
    ///
    /// # Errors
    /// As [`register_group`](Self::register_group).
    pub fn register_group_arc<G: ToolGroup>(&mut self, group: Arc<G>) -> Result<&mut Self, RegistryError> {
        let mut next = self.clone();
        if let Some((family, description)) = group.described_family() {
            next.describe_family(family, description)?;
        }
        for tool in group.tools() {
            next.register_arc(tool)?;
        }
        *self = next;
        Ok(self)
    }

    /// Registers a tool under an exposure the host chooses, whatever
    /// [`Tool::exposure`] says: defer a third-party tool, hide a dangerous one, or show
    /// a whole catalogue Direct to measure what deferral saves.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tinytools::{ToolExposure, ToolRegistry, tool};
    ///
    /// /// Wipe the scratch directory.
    /// #[tool(destructive)]
    /// async fn wipe_scratch() {}
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register_as(Arc::new(WipeScratch), ToolExposure::Hidden)?;
    /// assert!(registry.schemas().is_empty());
    /// assert_eq!(registry.get("wipe_scratch").map(|t| t.exposure()), Some(ToolExposure::Hidden));
    /// # Ok::<(), tinytools::RegistryError>(())
    /// ```
    ///
    /// # Errors
    /// As [`register`](Self::register).
    pub fn register_as(&mut self, tool: Arc<dyn Tool>, exposure: ToolExposure) -> Result<&mut Self, RegistryError> {
        let name = tool.name().to_owned();
        check_tool_name(&name).map_err(|reason| RegistryError::InvalidName { name: name.clone(), reason })?;
        if self.tools.contains_key(&name) {
            return Err(RegistryError::DuplicateName { name });
        }
        let spec = ToolSpec { exposure, ..ToolSpec::of(tool.as_ref()) };
        if let Some(family) = &spec.family {
            check_family(family).map_err(|reason| RegistryError::InvalidFamily {
                tool: name.clone(),
                family: family.clone().into_owned(),
                reason,
            })?;
        }
        if let Some(missing) = tool.required_state().into_iter().find(|required| !self.state.contains(*required)) {
            return Err(RegistryError::MissingState { tool: name, type_name: missing.type_name() });
        }
        let parameters = tool.parameters_schema();
        let admission = Admission::compile(&name, &parameters)?;
        let property = |argument: &str| parameters.get("properties").and_then(|properties| properties.get(argument));
        if let Some(grounding) = spec.grounding.iter().find(|grounding| property(grounding.argument).is_none()) {
            return Err(RegistryError::UnknownGroundedArgument { tool: name, argument: grounding.argument });
        }
        let entry = RegisteredTool {
            schema: Arc::new(ToolSchema { name: name.clone(), description: spec.description.to_string(), parameters }),
            spec: Arc::new(spec),
            admission,
            tool,
        };
        self.tools.insert(name, Arc::new(entry));
        Ok(self)
    }

    /// Takes a tool out of the registry, returning it. Used to swap a catalogue that changed
    /// (an MCP server's `list_changed`) between runs.
    ///
    /// ```
    /// use tinytools::{ToolRegistry, tool};
    ///
    /// /// Say hello.
    /// #[tool]
    /// async fn hello() -> &'static str { "hello" }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(Hello)?;
    /// assert!(registry.remove("hello").is_some());
    /// assert!(registry.remove("hello").is_none() && registry.is_empty());
    /// # Ok::<(), tinytools::RegistryError>(())
    /// ```
    pub fn remove(&mut self, name: &str) -> Option<Arc<dyn Tool>> {
        self.tools.remove(name).map(|entry| Arc::clone(&entry.tool))
    }

    /// Says what a family's tools have in common (an MCP server's `instructions`, a product
    /// area): discovery indexes it with each of the family's tools, for ranking only. The
    /// manifest and `tool_search` answers never show it, so it costs the model nothing. A
    /// family may be described before or after its tools register; describing it again
    /// replaces the description, and an empty (or blank) one removes it.
    ///
    /// ```
    /// use tinytools::discovery::DeferredCatalog;
    /// use tinytools::{ToolRegistry, tool};
    ///
    /// /// Create a record.
    /// #[tool(exposure = "deferred", family = "crm")]
    /// async fn create_record(/** The record's name. */ name: String) -> String { name }
    ///
    /// /// Create a note.
    /// #[tool(exposure = "deferred", family = "notes")]
    /// async fn create_note(/** The note's title. */ title: String) -> String { title }
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(CreateRecord)?.register(CreateNote)?;
    /// registry.describe_family("crm", "Customer accounts, sales leads and deals.")?;
    /// assert_eq!(registry.family_description("crm"), Some("Customer accounts, sales leads and deals."));
    ///
    /// // Only the description says "leads": the crm tool is found by it.
    /// let catalog = DeferredCatalog::new(&registry, |_| true);
    /// assert_eq!(catalog.bm25("create a lead", 1)[0].name, "create_record");
    /// # Ok::<(), tinytools::RegistryError>(())
    /// ```
    ///
    /// # Errors
    /// [`RegistryError::InvalidFamily`] when `family` breaks the family rule.
    pub fn describe_family(
        &mut self,
        family: impl Into<String>,
        description: impl Into<String>,
    ) -> Result<&mut Self, RegistryError> {
        let family = family.into();
        check_family(&family).map_err(|reason| RegistryError::InvalidFamily {
            tool: String::new(),
            family: family.clone(),
            reason,
        })?;
        let description = description.into();
        let description = description.trim();
        if description.is_empty() {
            self.families.remove(&family);
        } else {
            self.families.insert(family, Arc::from(description));
        }
        Ok(self)
    }

    /// What [`describe_family`](Self::describe_family) said of `family`, if anything.
    pub fn family_description(&self, family: &str) -> Option<&str> {
        self.families.get(family).map(AsRef::as_ref)
    }

    /// The description of `family`, shared.
    pub(crate) fn shared_family_description(&self, family: Option<&str>) -> Option<Arc<str>> {
        family.and_then(|family| self.families.get(family)).cloned()
    }

    /// The registered tool of that name, whatever its exposure.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name).map(Arc::as_ref)
    }

    /// Whether a tool of that name is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every registered tool, name-sorted.
    pub fn iter(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values().map(Arc::as_ref)
    }

    /// The Direct tools' declarations, name-sorted: the tools array before discovery.
    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.schemas_of(ToolExposure::Direct)
    }

    /// The Deferred tools' declarations, name-sorted: the discovery bridge's catalogue.
    pub fn deferred_schemas(&self) -> Vec<ToolSchema> {
        self.schemas_of(ToolExposure::Deferred)
    }

    /// The complete classification snapshot: one entry for every registered tool.
    pub fn policies(&self) -> ToolPolicies {
        self.iter().map(|tool| (tool.name().to_owned(), tool.policy())).collect()
    }

    fn schemas_of(&self, exposure: ToolExposure) -> Vec<ToolSchema> {
        self.iter().filter(|tool| tool.exposure() == exposure).map(|tool| ToolSchema::clone(&tool.schema)).collect()
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.values()).finish()
    }
}
