pub mod cc;
pub mod eid;
pub mod receiver;
pub mod server;
pub mod time;
pub mod wire;
pub use eid::Eid;
pub use time::Time;
