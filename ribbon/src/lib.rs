//! Ribbon filters in pure Rust: RocksDB's filter formats bit for bit, and a
//! general-purpose Ribbon filter with its own file format.
//!
//! # RocksDB's filters
//!
//! Build the filter block RocksDB writes for a policy and a table file, and
//! read any filter block RocksDB wrote, with RocksDB's answers:
//!
//! ```
//! use ribbon::{BuildContext, FilterBuilder, FilterPolicy, FilterReader};
//!
//! let policy: FilterPolicy = "ribbonfilter:10".parse()?;            // any RocksDB policy string
//! let ctx = BuildContext::sst_file_writer(7);                        // format_version, level, flush...
//! let mut builder = FilterBuilder::new(&policy, &ctx).expect("builds a filter");
//! builder.extend(["apple", "banana", "cherry"]);                     // or add_key, one at a time
//! let filter: Vec<u8> = builder.finish();                            // the filter block RocksDB writes
//!
//! let reader = FilterReader::new(&filter);                           // reads any filter block RocksDB wrote
//! assert!(reader.may_match("banana"));
//! let answers = reader.may_match_many(&["apple", "durian"]);         // MultiGet-style batch
//! assert!(answers[0]);
//! println!("{}", reader.describe());                                 // Standard128Ribbon bytes=... seed=...
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Keys are anything `AsRef<[u8]>`. Every query comes single (`may_match`,
//! `contains`) and batched over a slice (`may_match_many`,
//! `contains_many`), by key or by 64-bit hash (`..._hash`,
//! `..._many_hashes`).
//!
#![doc = include_str!("standalone/GUIDE.md")]
//!
//! # Modules: three rooms and the door between them
//!
//! ```text
//!                 plugin            rust.BalancedRibbon, the table-filter reader,
//!                /      \           standalone <-> Standard128 conversion
//!         rocksdb        standalone
//!  RocksDB's formats,    this crate's own filters: standalone and
//!  bit for bit           Balanced Ribbon, the sharded container
//!                \      /
//!                  core             hashes, banding, back-substitution,
//!                                   solutions, bounded-memory construction
//! ```
//!
//! * [`core`](mod@core): the generic Ribbon core, generic over its settings;
//!   it names no format.
//! * [`rocksdb`]: RocksDB 11.8.1's filter formats bit for bit (policies,
//!   builder, the dispatcher on the trailer, Standard128 Ribbon, both
//!   Blooms), and nothing of ours, as RocksDB's `filter_policy.cc` knows no
//!   plugin.
//! * [`standalone`]: this crate's own filters (the standalone Ribbon file,
//!   Balanced Ribbon, the sharded container).
//! * [`plugin`]: where the last two meet (the `rust.BalancedRibbon` policy,
//!   reached by its family's name; conversions).
//!
//! Dependencies point down only: `rocksdb` and `standalone` use `core` and
//! never each other, and only `plugin` uses both (`scripts/check-modules.py`
//! checks this, and that no modules of any crate import each other in a
//! circle).
//!
//! Words: a *filter block* is the filter's contents in an SST file (what
//! [`rocksdb::format`] reads); a *Ribbon block* is `w` consecutive slots
//! of a Ribbon solution (RocksDB's `num_blocks`); a *cache line* is the
//! 64-byte unit a Bloom filter probes within.

#![warn(missing_docs)]

extern crate alloc;

pub mod core;
pub mod plugin;
pub mod rocksdb;
pub mod standalone;
#[doc(hidden)]
pub mod test_support;

pub use crate::core::filter::MayContain;
pub use plugin::table_filter::{Family, TableFilter};
pub use rocksdb::builder::{build_filter, FilterBuilder};
pub use rocksdb::format::{FilterDescription, FilterReader, NotAFilter};
pub use rocksdb::policy::{BuildContext, FilterPolicy};
pub use standalone::{Config, Ribbon, RibbonRef};
