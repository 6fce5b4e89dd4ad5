//! Types shared by server and browser, and the server functions.

mod audit;
mod error;
mod live;
mod model;
mod policy;
pub mod server_fns;

pub use audit::*;
pub use error::*;
pub use live::*;
pub use model::*;
pub use policy::*;
pub use server_fns::*;

#[cfg(feature = "ssr")]
mod backend;
#[cfg(feature = "ssr")]
pub use backend::*;
