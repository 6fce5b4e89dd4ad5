//! Types shared by server and browser, and the server functions.

mod live;
mod model;
pub mod server_fns;

pub use live::*;
pub use model::*;
pub use server_fns::*;

#[cfg(feature = "ssr")]
mod backend;
#[cfg(feature = "ssr")]
pub use backend::*;
