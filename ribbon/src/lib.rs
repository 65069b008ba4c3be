//! Ribbon filters in pure Rust: RocksDB's filter formats bit for bit, and a
//! general-purpose Ribbon filter with its own file format.
//!
//! # RocksDB's filters
//!
//! Build the filter block RocksDB writes for a policy and a table file, and
//! read any filter block RocksDB wrote, with RocksDB's answers:
//!
//! ```
//! use ribbon::{BuildContext, FilterBuilder, FilterPolicy, FilterReader, DEFAULT_FORMAT_VERSION};
//!
//! let policy: FilterPolicy = "ribbonfilter:10".parse()?;            // any RocksDB policy string
//! let ctx = BuildContext::sst_file_writer(DEFAULT_FORMAT_VERSION);   // format_version (RocksDB's default, 7), level, flush...
//! // `None` only for a policy that builds no filter ("bloomfilter:0"):
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
//! [`FilterBuilder::new`] returns `None` when the policy builds no filter
//! at all (0 bits per key, as RocksDB's own builder is then null; see
//! [`FilterPolicy::builds_filters`]): a table written with such a policy
//! has no filter block. Every other policy gives a builder.
//!
//! Every reader (a filter block, a standalone or sharded filter and, in
//! `ribbon-sst`, a whole SST file) implements [`MayContain`], one trait
//! with `contains` and `contains_many`, so code can take any of them.
//! Errors of every part convert into one [`Error`] for `?`.
//!
//! # Features
//!
//! * `std` (default): the standard library, for the run-time CPU feature
//!   detection of the query kernels (AVX2, POPCNT, AVX-512 on x86-64) and
//!   the platform's float functions. Without it the crate is `#![no_std]`
//!   with `alloc`: the kernels are those the compile-time target features
//!   allow (`-C target-feature=+avx2`), and the float functions come from
//!   the `libm` crate (feature `libm`, which such a build needs:
//!   `default-features = false, features = ["libm"]`), whose `log` differs from glibc's in the last bit for about 1 %
//!   of integers (measured: 9503 of the first 2^20). RocksDB's slot counts,
//!   computed from it, match RocksDB's golden values either way (the unit
//!   tests of `core::config` run in both builds); the errors implement
//!   `core::error::Error` in both.
//! * `serde`: `Serialize` for the descriptions of filters;
//!   `Serialize`/`Deserialize` for [`Config`] and its parts, for
//!   [`FilterPolicy`] (as its id) and for [`Ribbon`] and [`RibbonRef`] (as
//!   their bytes, checked on the way in; `RibbonRef` zero-copy).
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
#![cfg_attr(not(feature = "std"), no_std)]
// Without std, the float functions are `core::float::Float`'s, and core's
// own unstable methods of the same names must not be picked.
#![cfg_attr(not(feature = "std"), allow(unstable_name_collisions))]

#[cfg(not(any(feature = "std", feature = "libm")))]
compile_error!("rocks-ribbon without its `std` feature needs the `libm` feature (the float functions)");

extern crate alloc;
// The unit tests use the standard library (their harness links it anyway).
#[cfg(all(test, not(feature = "std")))]
extern crate std;

pub mod core;
pub mod plugin;
pub mod rocksdb;
pub mod standalone;
#[doc(hidden)]
pub mod test_support;

pub use crate::core::filter::MayContain;
pub use plugin::table_filter::{Family, TableFilter};
pub use rocksdb::builder::KeyHashRefused;
pub use rocksdb::builder::{build_filter, FilterBuilder};
pub use rocksdb::format::{FilterDescription, FilterReader, NotAFilter};
pub use rocksdb::policy::{
    check_format_version, FormatVersionError, PolicyParseError, DEFAULT_FORMAT_VERSION,
};
pub use rocksdb::policy::{BuildContext, FilterPolicy};
pub use standalone::{Config, Mode, Precision, Ribbon, RibbonRef};

/// Any error of this crate, for `?` in code that uses several of its parts:
/// each part's error converts into it (`From`), and
/// [`source`](::core::error::Error::source) gives the part's error.
///
/// ```
/// fn build_and_check(policy: &str, filter_file: &[u8]) -> Result<bool, ribbon::Error> {
///     let policy: ribbon::FilterPolicy = policy.parse()?;              // PolicyParseError
///     let filter = ribbon::RibbonRef::from_bytes(filter_file)?;        // standalone::Error
///     Ok(policy.builds_filters() && filter.contains("key"))
/// }
/// let e = build_and_check("ribbonfilter:ten", &[]).unwrap_err();
/// assert!(matches!(e, ribbon::Error::Policy(_)));
/// assert!(core::error::Error::source(&e).is_some());
/// let e = build_and_check("ribbonfilter:10", b"not a filter").unwrap_err();
/// assert!(matches!(e, ribbon::Error::Standalone(_)));
/// assert_eq!(e.to_string(), core::error::Error::source(&e).unwrap().to_string());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A standalone filter: its configuration, construction or bytes.
    Standalone(standalone::Error),
    /// A sharded filter: assembling it, or its bytes.
    Sharded(standalone::sharded::Error),
    /// Bytes that are not a filter block RocksDB writes.
    NotAFilter(NotAFilter),
    /// A filter policy id RocksDB would not accept.
    Policy(PolicyParseError),
    /// A 64-bit key hash offered to a builder that takes keys only.
    KeyHashRefused(KeyHashRefused),
}

impl ::core::fmt::Display for Error {
    /// The part's own message.
    fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
        match self {
            Error::Standalone(e) => e.fmt(f),
            Error::Sharded(e) => e.fmt(f),
            Error::NotAFilter(e) => e.fmt(f),
            Error::Policy(e) => e.fmt(f),
            Error::KeyHashRefused(e) => e.fmt(f),
        }
    }
}

impl ::core::error::Error for Error {
    fn source(&self) -> Option<&(dyn ::core::error::Error + 'static)> {
        Some(match self {
            Error::Standalone(e) => e,
            Error::Sharded(e) => e,
            Error::NotAFilter(e) => e,
            Error::Policy(e) => e,
            Error::KeyHashRefused(e) => e,
        })
    }
}

macro_rules! error_from {
    ($($variant:ident($ty:ty)),*) => {$(
        impl From<$ty> for Error {
            fn from(e: $ty) -> Self {
                Error::$variant(e)
            }
        }
    )*};
}

error_from!(
    Standalone(standalone::Error),
    Sharded(standalone::sharded::Error),
    NotAFilter(NotAFilter),
    Policy(PolicyParseError),
    KeyHashRefused(KeyHashRefused)
);
