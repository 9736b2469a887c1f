pub mod eid;
pub mod time;
pub mod wire;
pub use eid::Eid;
pub use time::Time;
