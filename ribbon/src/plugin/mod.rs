//! Where this crate's own filters meet RocksDB's formats: the one module
//! that uses both [`crate::rocksdb`] and [`crate::standalone`] (which never
//! use each other).
//!
//! * [`balanced_policy`]: `rust.BalancedRibbon`, a RocksDB filter policy
//!   whose blocks are Balanced Ribbon filters, stored under its own family
//!   and read by its own reader, as RocksDB reads a custom policy's blocks;
//! * [`table_filter`]: the reader of a table's filter block under any
//!   family this crate knows (RocksDB's built-in family, or
//!   `rust.BalancedRibbon`), chosen by the family's name as RocksDB chooses
//!   the configured policy's reader;
//! * [`standard128_import`]: conversion between a standalone filter and
//!   RocksDB's Standard128 Ribbon block (the same solution bytes).

pub mod balanced_policy;
mod standard128_import;
pub mod table_filter;

pub use table_filter::{BalancedDescription, Description, Family, TableFilter};
