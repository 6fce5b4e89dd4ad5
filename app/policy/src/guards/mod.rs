//! Guards: checks on argument values that a schema cannot express.
pub mod command;
pub mod path;
pub mod url;
