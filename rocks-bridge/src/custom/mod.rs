//! Any Rust filter as a RocksDB filter policy.
//!
//! RocksDB 7.0 removed custom filter policies from its C API, so bindings
//! cannot supply their own filter any more. This module gives that back:
//! implement [`Policy`] (and the [`Builder`] and [`Reader`] it hands out)
//! for your filter, [`register_policy`] a factory under a name of your
//! choice, and RocksDB selects it wherever it parses a filter policy: an
//! options string, an OPTIONS file, [`crate::set_filter_policy`].
//!
//! ```no_run
//! use rocks_bridge::custom::{self, Builder, FilterBlock, Policy, Reader};
//! use ribbon::rocksdb::policy::BuildContext;
//! use std::sync::Arc;
//!
//! /// Keeps every key's 64-bit hash, sorted: an exact-ish set, for the example.
//! struct SortedHashes;
//! struct SortedBuilder(Vec<u64>);
//! struct SortedReader(FilterBlock);
//!
//! impl Policy for SortedHashes {
//!     fn id(&self) -> String { "example.SortedHashes".into() }
//!     fn compatibility_name(&self) -> String { "example.SortedHashes".into() }
//!     fn builder(&self, _: &BuildContext) -> Option<Box<dyn Builder>> {
//!         Some(Box::new(SortedBuilder(Vec::new())))
//!     }
//!     fn reader(&self, filter: FilterBlock) -> Box<dyn Reader> {
//!         Box::new(SortedReader(filter))
//!     }
//! }
//! impl Builder for SortedBuilder {
//!     fn add_key(&mut self, key: &[u8]) { self.0.push(ribbon::core::hash::get_slice_hash64(key)) }
//!     fn estimate_entries_added(&self) -> usize { self.0.len() }
//!     fn finish(&mut self) -> Vec<u8> {
//!         self.0.sort_unstable();
//!         self.0.dedup();
//!         std::mem::take(&mut self.0).iter().flat_map(|h| h.to_le_bytes()).collect()
//!     }
//!     fn calculate_space(&self, num_entries: usize) -> usize { num_entries * 8 }
//!     fn estimated_fp_rate(&self, _: usize, _: usize) -> f64 { 0.0 }
//! }
//! impl Reader for SortedReader {
//!     fn may_match(&self, key: &[u8]) -> bool {
//!         let h = ribbon::core::hash::get_slice_hash64(key);
//!         let hashes: Vec<u64> = self.0.chunks_exact(8)
//!             .map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
//!         hashes.binary_search(&h).is_ok()
//!     }
//! }
//!
//! custom::register_policy("example.SortedHashes", |args| match args {
//!     None => Ok(Arc::new(SortedHashes) as Arc<dyn Policy>),
//!     Some(a) => Err(format!("takes no arguments, got {a:?}")),
//! })?;
//! let mut opts = rocksdb::Options::default();
//! opts.set_block_based_table_factory(&rocksdb::BlockBasedOptions::default());
//! rocks_bridge::set_filter_policy(&mut opts, "example.SortedHashes")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Contract
//!
//! * **Ids.** A policy registered as `NAME` is selected by the id `NAME`
//!   (the factory gets `None`) or `NAME:ARGS` (it gets `Some(ARGS)`). Its
//!   [`Policy::id`] is what RocksDB writes to the OPTIONS file, so it must be
//!   `NAME` or `NAME:...` and must make the factory create the same policy
//!   again; a policy whose id does not start so is refused when created.
//! * **Filter blocks.** RocksDB stores a policy's filters under its
//!   [`Policy::compatibility_name`] and uses a table's filter only when the
//!   reading policy has the same compatibility name. Give filters of
//!   different formats different names.
//! * **Failures.** Nothing unwinds into RocksDB. A factory that panics or
//!   errs makes RocksDB reject the id. A builder that panics (or a
//!   [`Policy::builder`] call that panics) writes a filter that every
//!   reader of this bridge answers "may match" for, without asking your
//!   reader (see [`ALWAYS_TRUE_FILTER`]); a reader that panics answers "may
//!   match". A failure can cost filtering, never a false negative.
//! * **Threads.** RocksDB builds filters on its flush and compaction threads
//!   and queries readers from every reading thread at once: builders are
//!   `Send`, readers `Send + Sync`, policies `Send + Sync`.

mod registry;

pub use registry::register_policy;
pub(crate) use registry::{make_policy, register_builtin};

use ribbon::rocksdb::policy::BuildContext;
use std::ops::Deref;

/// A filter policy implemented in Rust (see the [module](self) docs).
pub trait Policy: Send + Sync + 'static {
    /// The id RocksDB writes to OPTIONS files and shows: the registered name,
    /// or the name, `:` and arguments that recreate this policy.
    fn id(&self) -> String;
    /// The family the filter blocks are stored under (RocksDB's
    /// `FilterPolicy::CompatibilityName`); a reader uses a table's filter only
    /// when the names match.
    fn compatibility_name(&self) -> String;
    /// A builder for one filter block of a table file, or `None` for no
    /// filter in this file.
    fn builder(&self, ctx: &BuildContext) -> Option<Box<dyn Builder>>;
    /// A reader over a filter block a policy of this family wrote.
    fn reader(&self, filter: FilterBlock) -> Box<dyn Reader>;
    /// The filter a builder that failed (panicked) writes, which every
    /// reader of this family must answer "may match" for. The default is
    /// [`ALWAYS_TRUE_FILTER`], which the bridge's readers recognise before
    /// asking the policy's reader; a family with its own always-true
    /// filter (RocksDB's built-in one) names it here.
    fn always_true_filter(&self) -> Vec<u8> {
        ALWAYS_TRUE_FILTER.to_vec()
    }
    /// The names of the settings RocksDB may change on the live policy
    /// (`SetOptions` with `table_factory.filter_policy.NAME`) and writes to
    /// OPTIONS files next to the id, as RocksDB's `ribbonfilter` does with
    /// `bloom_before_level`. None by default.
    fn mutable_options(&self) -> Vec<String> {
        Vec::new()
    }
    /// Sets one of the [`mutable_options`](Policy::mutable_options) from its
    /// text; an error is RocksDB's error for the `SetOptions` call. The
    /// policy is shared with RocksDB's threads: use interior mutability
    /// (an atomic).
    fn set_option(&self, name: &str, value: &str) -> Result<(), String> {
        Err(format!(
            "filter policy {} has no option {name:?} (value {value:?})",
            self.id()
        ))
    }
    /// The text of one of the [`mutable_options`](Policy::mutable_options).
    fn option(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }
}

/// Builds one filter block (RocksDB's `FilterBitsBuilder`).
pub trait Builder: Send {
    /// Adds a key (RocksDB adds whole keys and, with a prefix extractor,
    /// prefixes, in sorted order, possibly repeated).
    fn add_key(&mut self, key: &[u8]);
    /// Adds a key and an alternative (a prefix) for it. The default adds
    /// both.
    fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        self.add_key(key);
        self.add_key(alt);
    }
    /// About how many entries were added since the last `finish`.
    fn estimate_entries_added(&self) -> usize;
    /// The filter block for the entries added; the builder is then empty,
    /// ready for the next block (partitioned filters reuse builders).
    fn finish(&mut self) -> Vec<u8>;
    /// The size `finish` would give for `num_entries` entries (RocksDB cuts
    /// filter partitions with it).
    fn calculate_space(&self, num_entries: usize) -> usize;
    /// The most entries whose filter fits in `bytes`. The default searches
    /// [`calculate_space`](Builder::calculate_space).
    fn approximate_num_entries(&self, bytes: usize) -> usize {
        let (mut lo, mut hi) = (0usize, bytes.saturating_mul(8).max(1));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.calculate_space(mid) <= bytes {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
    /// The expected false-positive rate of a filter of `bytes` over
    /// `num_entries` entries (statistics only).
    fn estimated_fp_rate(&self, num_entries: usize, bytes: usize) -> f64;
    /// For builders over 64-bit hash entries that follow RocksDB's
    /// construction protocol (its FastLocalBloom and Ribbon builders): the
    /// hooks through which the bridge charges construction memory to the
    /// block cache and detects corrupted construction as RocksDB does. `None`
    /// (the default): nothing is charged or checked, as for any custom
    /// policy in RocksDB itself.
    fn construction(&mut self) -> Option<&mut dyn Construction> {
        None
    }
}

/// RocksDB's construction protocol (`XXPH3FilterBitsBuilder` in
/// `table/block_based/filter_policy.cc`), for a [`Builder`] that offers it
/// through [`Builder::construction`]. The bridge then charges, under
/// `cache_usage_options`' `kFilterConstruction` role, a bucket of 32,768
/// entries' worth of memory each time
/// [`Builder::estimate_entries_added`] passes half of one, the
/// [`banding_bytes`](Construction::banding_bytes) before finishing (asking
/// for the Bloom fall-back when the cache refuses them), and the finished
/// filter; and with `detect_filter_construct_corruption` it asks for the
/// entry check and the post-verification.
pub trait Construction {
    /// The bytes finishing would band now (a Ribbon filter's banding); 0
    /// when it would not band.
    fn banding_bytes(&self) -> usize;
    /// [`Builder::finish`], with RocksDB's Bloom filter instead of the
    /// banded one when `bloom_fallback`; with `detect`, the entries are
    /// checked against a checksum taken as they were added, and kept for
    /// [`post_verify`](Construction::post_verify).
    fn finish_constructed(&mut self, bloom_fallback: bool, detect: bool) -> Finished;
    /// RocksDB's `MaybePostVerify`: whether the finished filter matches
    /// every kept entry. Releases the kept entries.
    fn post_verify(&mut self, filter: &[u8]) -> bool;
}

/// What [`Construction::finish_constructed`] gives back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Finished {
    /// The filter block (empty: no filter).
    pub filter: Vec<u8>,
    /// The filter was banded (a Ribbon filter): RocksDB charges it after the
    /// entry check, a Bloom filter before.
    pub banded: bool,
    /// The entries matched their checksum (always, without `detect`).
    pub entries_intact: bool,
}

/// Answers queries over one filter block (RocksDB's `FilterBitsReader`).
pub trait Reader: Send + Sync {
    /// `false` only if `key` was certainly not added.
    fn may_match(&self, key: &[u8]) -> bool;
    /// [`may_match`](Reader::may_match) for each key, into `out` (as long as
    /// `keys`): RocksDB's MultiGet batch. The default asks one by one.
    fn may_match_many(&self, keys: &[&[u8]], out: &mut [bool]) {
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.may_match(k);
        }
    }
}

/// The filter a failed builder writes: every reader of this bridge answers
/// "may match" for a block with exactly these bytes, without asking the
/// policy's reader. (A policy whose own filter happens to be exactly these
/// bytes loses filtering for that block, never correctness.)
pub const ALWAYS_TRUE_FILTER: &[u8] = b"\0rocks-bridge: always true\0";

/// A filter block's bytes, owned by RocksDB's block cache (or by the
/// reader, for blocks made with [`FilterBlock::from`]). It derefs to `[u8]`
/// and stays valid for as long as the reader holding it lives.
pub struct FilterBlock(Bytes);

enum Bytes {
    /// Memory RocksDB keeps alive and unchanged while the reader lives.
    Borrowed(*const u8, usize),
    Owned(Box<[u8]>),
}

// SAFETY: the borrowed bytes are immutable for the reader's lifetime (see
// `FilterBlock::borrowed`), so sharing and sending the pointer across threads
// is as safe as sharing `&[u8]`; the owned variant is a `Box<[u8]>`.
unsafe impl Send for FilterBlock {}
// SAFETY: as for `Send`: only shared, immutable access is ever given out.
unsafe impl Sync for FilterBlock {}

impl FilterBlock {
    /// # Safety
    /// `data` stays alive and unchanged until the returned value is dropped
    /// (RocksDB's `GetFilterBitsReader` contract: the filter block outlives
    /// the reader made over it).
    pub(crate) unsafe fn borrowed(data: &[u8]) -> Self {
        Self(Bytes::Borrowed(data.as_ptr(), data.len()))
    }
}

impl From<Vec<u8>> for FilterBlock {
    /// A block owning its bytes (for tests and tools).
    fn from(v: Vec<u8>) -> Self {
        Self(Bytes::Owned(v.into_boxed_slice()))
    }
}

impl Deref for FilterBlock {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Bytes::Borrowed(_, 0) => &[],
            // SAFETY: per `borrowed`'s contract the range is live and
            // unchanged for `self`'s lifetime, which bounds the borrow.
            Bytes::Borrowed(p, n) => unsafe { std::slice::from_raw_parts(*p, *n) },
            Bytes::Owned(b) => b,
        }
    }
}

impl std::fmt::Debug for FilterBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FilterBlock({} bytes)", self.len())
    }
}
