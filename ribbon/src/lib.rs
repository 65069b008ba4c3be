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
//! # Modules
//!
//! The modules reproduce RocksDB 11.8.1's filters bit for bit, layered
//! as in RocksDB: the generic Ribbon core ([`alg`]: banding and
//! back-substitution; [`standard`]: the hasher; [`solution`]: the interleaved
//! solution and its queries; [`config`]: slots for a number of keys), the key
//! hashes ([`hash`]) and their arithmetic ([`math`]), the Bloom filters
//! ([`bloom`]), RocksDB's Standard128 Ribbon filter ([`standard128`]), and the
//! filter-block level: the trailer every format ends with and the rules
//! they share ([`trailer`]), policies ([`policy`]), building ([`builder`])
//! and reading any filter block by its trailer ([`format`](mod@format)).
//! The standalone filter ([`standalone`]) is one more instantiation of the
//! same core. [`alg`], [`standard`], [`solution`] and [`math`] are the
//! internals of the formats, public for tests, tools and experiments; their
//! API may change with any release.
//!
//! Words: a *filter block* is the filter's contents in an SST file (what
//! [`format`](mod@format) reads); a *Ribbon block* is `w` consecutive slots
//! of a Ribbon solution (RocksDB's `num_blocks`); a *cache line* is the
//! 64-byte unit a Bloom filter probes within.

#![warn(missing_docs)]
pub mod alg;
mod arch;
pub mod balanced_policy;
mod batch;
pub mod bloom;
pub mod builder;
pub mod config;
pub mod format;
pub mod hash;
pub mod math;
pub mod policy;
pub mod sharded;
pub mod solution;
pub mod standalone;
pub mod standard;
pub mod standard128;
#[doc(hidden)]
pub mod test_support;
pub mod trailer;

pub use builder::{build_filter, FilterBuilder};
pub use format::{Family, FilterDescription, FilterReader, NotAFilter};
pub use policy::{BuildContext, FilterPolicy};
pub use standalone::{Config, Ribbon, RibbonRef};
