//! Shared test helpers: the deterministic key generators of the golden
//! vectors, so both suites make the same keys.
#![allow(dead_code, unused_imports)]

pub use ribbon::test_support::keys::*;
