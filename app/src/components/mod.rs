pub mod live;
pub mod shell;
