//! Test data shared by this crate's tests and examples and by the
//! workspace's other test suites, benchmarks and golden-vector generator:
//! deterministic key sets and the golden vectors' match summary.
//!
//! Not part of the filter API (hidden from the docs): it exists so that
//! every suite draws the same keys from one definition instead of
//! including each other's files by path.

pub mod keys;
pub mod stats;
