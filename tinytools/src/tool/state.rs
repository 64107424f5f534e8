//! Host state for tools: the [`State`] extractor, what a tool [requires](RequiredState), and
//! the type-keyed map that carries it ([`StateMap`]).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Shared host state a tool receives by type: a database pool, an HTTP client, a config.
///
/// A `#[tool]` fn takes it as a parameter, as an axum handler takes its state; the parameter is
/// not part of the tool's schema. The registry carries the value
/// ([`ToolRegistry::with_state`](crate::ToolRegistry::with_state)), and registering a tool whose
/// state the registry lacks is an error
/// ([`RegistryError::MissingState`](crate::RegistryError::MissingState)), so a call never finds
/// it missing. State registered as `Arc<T>` is found as `State<T>` too.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use tinytools::{State, ToolRegistry, tool};
///
/// struct Quotes { acme: f64 }
///
/// /// Fetch the latest price for a ticker symbol.
/// #[tool(read_only)]
/// async fn stock_quote(
///     /// Ticker symbol, such as ACME.
///     symbol: String,
///     quotes: State<Quotes>,
/// ) -> String {
///     format!("{symbol} {}", quotes.acme)
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut registry = ToolRegistry::new().with_state(Arc::new(Quotes { acme: 12.5 }));
/// registry.register(StockQuote)?;
/// assert!(registry.schemas()[0].parameters["properties"].get("quotes").is_none());
/// let quote = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await?;
/// assert_eq!(quote.to_model_text(), "ACME 12.5");
///
/// // Without the state, registration says what is missing.
/// let error = ToolRegistry::new().register(StockQuote).map(|_| ()).unwrap_err();
/// assert!(error.to_string().contains("State<") && error.to_string().contains("Quotes"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for State<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("State").field(&&*self.0).finish()
    }
}

/// A state type a tool needs ([`Tool::required_state`](crate::Tool::required_state)), checked
/// when the tool is registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RequiredState {
    type_id: TypeId,
    /// `Arc<T>`'s id: state stored as `Arc<T>` meets a `State<T>` too.
    arc_type_id: TypeId,
    type_name: &'static str,
}

impl RequiredState {
    /// The requirement of a `State<T>`.
    pub fn of<T: Send + Sync + 'static>() -> Self {
        Self { type_id: TypeId::of::<T>(), arc_type_id: TypeId::of::<Arc<T>>(), type_name: std::any::type_name::<T>() }
    }

    /// The type's name, for messages.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

/// Values by type, shared: what a registry or a call context carries.
#[derive(Clone, Default)]
pub struct StateMap {
    values: Arc<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl StateMap {
    /// Stores `value` under its type, replacing an earlier value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.insert_shared(Arc::new(value));
    }

    /// Stores a shared value under its type `T`.
    pub fn insert_shared<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        Arc::make_mut(&mut self.values).insert(TypeId::of::<T>(), value);
    }

    /// The value of type `T`, if there is one: stored as `T`, or as an `Arc<T>` (the common
    /// way to share a pool: `with_state(Arc::new(db))` is found by `State<Db>`).
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        if let Some(value) = self.values.get(&TypeId::of::<T>()) {
            return Arc::clone(value).downcast::<T>().ok();
        }
        let shared = self.values.get(&TypeId::of::<Arc<T>>())?;
        shared.downcast_ref::<Arc<T>>().map(Arc::clone)
    }

    /// The value of type `T`, borrowed; found as [`get`](Self::get) finds it.
    pub fn get_ref<T: Send + Sync + 'static>(&self) -> Option<&T> {
        if let Some(value) = self.values.get(&TypeId::of::<T>()) {
            return value.downcast_ref::<T>();
        }
        self.values.get(&TypeId::of::<Arc<T>>())?.downcast_ref::<Arc<T>>().map(|shared| &**shared)
    }

    /// Whether a value for this requirement is here.
    pub fn contains(&self, required: RequiredState) -> bool {
        self.values.contains_key(&required.type_id) || self.values.contains_key(&required.arc_type_id)
    }

    /// How many values are here.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no value is here.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `self`'s values over `base`'s: what a call sees of its registry's state and its own.
    pub(crate) fn layered_over(&self, base: &StateMap) -> StateMap {
        if self.is_empty() {
            return base.clone();
        }
        if base.is_empty() {
            return self.clone();
        }
        let mut merged = base.clone();
        let values = Arc::make_mut(&mut merged.values);
        for (key, value) in self.values.iter() {
            values.insert(*key, Arc::clone(value));
        }
        merged
    }
}

impl fmt::Debug for StateMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateMap").field("types", &self.values.len()).finish()
    }
}
