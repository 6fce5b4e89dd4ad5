pub mod break_glass;
pub mod clock;
pub mod diff;
pub mod json;
pub mod live;
pub mod shell;
