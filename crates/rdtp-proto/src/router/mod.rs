//! Caching routers (NDN-style: content store, PIT, FIB). Placeholder: so far only the
//! content store, [`cs`], is here; the router itself replaces this file when it lands.

pub mod cs;
