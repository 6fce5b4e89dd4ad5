pub mod break_glass;
pub mod clock;
pub mod diff;
pub mod json;
pub mod live;
pub mod post;
pub mod refresh;
pub mod shell;
