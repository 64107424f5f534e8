//! A run's configuration. (The agent loop that drives runs lives here as it arrives.)

mod policy;

pub use policy::RunPolicy;
