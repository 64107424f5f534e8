//! [`ToolDocument`]: what of a tool the index reads, and how much each part weighs.

use serde_json::{Map, Value};

use crate::ToolSchema;

/// How much each part of a tool counts in its search document.
///
/// The defaults were chosen by measurement on the eval sets (`docs/retrieval.md`).
///
/// ```
/// use tinytools::rank::FieldWeights;
///
/// let weights = FieldWeights::default().with_name(3.0).with_family(0.0).with_family_description(0.5);
/// assert_eq!((weights.name, weights.description, weights.family), (3.0, 1.0, 0.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct FieldWeights {
    /// The tool's name, split into words (`stock_quote` → "stock", "quote").
    pub name: f32,
    /// The tool's description.
    pub description: f32,
    /// The names of its top-level parameters.
    pub parameter_names: f32,
    /// The descriptions of its top-level parameters.
    pub parameter_descriptions: f32,
    /// Its family (`finance`, an MCP server's name).
    pub family: f32,
    /// Its family's description ([`ToolRegistry::describe_family`](crate::ToolRegistry::describe_family),
    /// an MCP server's `instructions`): shared by every tool of the family, so it is weighed
    /// low; it lifts a family's tools for a query only the family's description matches.
    pub family_description: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        Self {
            name: 2.0,
            description: 1.0,
            parameter_names: 1.0,
            parameter_descriptions: 0.5,
            family: 1.0,
            family_description: FAMILY_DESCRIPTION_WEIGHT,
        }
    }
}

/// The default weight of a family's description, chosen on LiveMCPBench retrieval from three
/// values (`bench/records/livemcp/README.md`).
const FAMILY_DESCRIPTION_WEIGHT: f32 = 0.3;

impl FieldWeights {
    /// Sets the weight of the tool's name.
    #[must_use]
    pub const fn with_name(mut self, name: f32) -> Self {
        self.name = name;
        self
    }

    /// Sets the weight of the tool's description.
    #[must_use]
    pub const fn with_description(mut self, description: f32) -> Self {
        self.description = description;
        self
    }

    /// Sets the weight of its top-level parameter names.
    #[must_use]
    pub const fn with_parameter_names(mut self, parameter_names: f32) -> Self {
        self.parameter_names = parameter_names;
        self
    }

    /// Sets the weight of its top-level parameter descriptions.
    #[must_use]
    pub const fn with_parameter_descriptions(mut self, parameter_descriptions: f32) -> Self {
        self.parameter_descriptions = parameter_descriptions;
        self
    }

    /// Sets the weight of its family.
    #[must_use]
    pub const fn with_family(mut self, family: f32) -> Self {
        self.family = family;
        self
    }

    /// Sets the weight of its family's description (0 leaves it out).
    #[must_use]
    pub const fn with_family_description(mut self, family_description: f32) -> Self {
        self.family_description = family_description;
        self
    }
}

/// A tool as the index reads it: its fields and their weights. Borrows from the declaration.
///
/// ```
/// use serde_json::json;
/// use tinytools::ToolSchema;
/// use tinytools::rank::{Bm25Index, FieldWeights, ToolDocument};
///
/// let quote = ToolSchema::new(
///     "stock_quote",
///     "Fetch the latest price for a ticker symbol.",
///     json!({"type": "object", "properties": {"symbol": {"type": "string"}}}),
/// );
/// let document = ToolDocument::new(&quote, Some("finance"));
/// let index = Bm25Index::with_fields([document.fields(FieldWeights::default())]);
/// assert_eq!(index.search("finance symbol", 1)[0].doc, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolDocument<'a> {
    name: &'a str,
    description: &'a str,
    /// The top-level `properties` object, read lazily: no copy, no allocation.
    properties: Option<&'a Map<String, Value>>,
    family: &'a str,
    family_description: &'a str,
}

impl<'a> ToolDocument<'a> {
    /// Reads a tool's declaration and family.
    pub fn new(schema: &'a ToolSchema, family: Option<&'a str>) -> Self {
        Self {
            name: &schema.name,
            description: &schema.description,
            properties: schema.parameters.get("properties").and_then(Value::as_object),
            family: family.unwrap_or_default(),
            family_description: "",
        }
    }

    /// The same tool, with its family's description (ranked at
    /// [`FieldWeights::family_description`]).
    ///
    /// ```
    /// use serde_json::json;
    /// use tinytools::ToolSchema;
    /// use tinytools::rank::{Bm25Index, FieldWeights, ToolDocument};
    ///
    /// let parameters = json!({"type": "object"});
    /// let create = ToolSchema::new("create_record", "Create a record.", parameters.clone());
    /// let note = ToolSchema::new("create_note", "Create a note.", parameters);
    /// let documents = [
    ///     ToolDocument::new(&create, Some("crm")).with_family_description(Some("Sales leads and deals.")),
    ///     ToolDocument::new(&note, Some("notes")),
    /// ];
    /// let index = Bm25Index::with_fields(documents.map(|d| d.fields(FieldWeights::default())));
    /// assert_eq!(index.search("create a lead", 2)[0].doc, 0);
    /// ```
    #[must_use]
    pub fn with_family_description(mut self, description: Option<&'a str>) -> Self {
        self.family_description = description.unwrap_or_default();
        self
    }

    /// The weighted fields, ready for [`Bm25Index::with_fields`](super::Bm25Index::with_fields):
    /// name, description, family, family description, then each top-level parameter's name
    /// and description.
    pub fn fields(self, weights: FieldWeights) -> impl Iterator<Item = (f32, &'a str)> {
        let parameters = self.properties.into_iter().flatten().flat_map(move |(name, property)| {
            let description = property.get("description").and_then(Value::as_str).unwrap_or_default();
            [(weights.parameter_names, name.as_str()), (weights.parameter_descriptions, description)]
        });
        [
            (weights.name, self.name),
            (weights.description, self.description),
            (weights.family, self.family),
            (weights.family_description, self.family_description),
        ]
        .into_iter()
        .chain(parameters)
    }
}
