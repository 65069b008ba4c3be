//! RocksDB's filter formats, bit for bit, and nothing else: the filter
//! blocks RocksDB 6.x to 11.x writes into block-based tables, built and read
//! as RocksDB's `table/block_based/filter_policy.cc` does.
//!
//! | module | holds | RocksDB |
//! |---|---|---|
//! | [`policy`] | policy strings and the rules that pick a filter kind | `FilterPolicy`, `BloomLikeFilterPolicy`, `RibbonFilterPolicy` |
//! | [`builder`] | building a filter block for a policy and a table | `GetBuilderWithContext` |
//! | [`format`] | reading any built-in filter block by its trailer | `GetBuiltinFilterBitsReader` |
//! | [`trailer`] | the 5-byte trailer and the rules every format shares | metadata bytes of each format |
//! | [`standard128`] | Standard128 Ribbon | `Standard128RibbonBitsBuilder` / `Reader` |
//! | [`bloom`] | FastLocalBloom and the legacy Bloom | `util/bloom_impl.h` |
//!
//! Like RocksDB's built-in policies, this module knows no plugin: a block
//! under another family (this crate's `rust.BalancedRibbon`, say) is read
//! by that family's own reader ([`crate::plugin`]), never through
//! [`format::FilterReader`]. Everything here is built on [`crate::core`]
//! only.

pub mod bloom;
#[cfg(test)]
mod bloom_tests;
pub mod builder;
pub mod format;
pub mod policy;
pub mod standard128;
pub mod trailer;
