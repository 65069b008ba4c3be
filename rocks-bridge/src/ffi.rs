//! The cxx bridge between RocksDB's filter interfaces (C++, in
//! `cpp/rust_filter_policy.cc`) and the `ribbon` crate.
//!
//! Contract for every function C++ calls: it never unwinds into C++. A panic
//! is caught; a builder then yields RocksDB's "always true" filter and a
//! reader answers "may match", so a failure can cost filtering but never a
//! false negative.

use ribbon::builder::FilterBuilder;
use ribbon::format::FilterReader;
use ribbon::format::ALWAYS_TRUE_FILTER as ALWAYS_TRUE;
use ribbon::policy::{self, FilterPolicy};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Filters finished by Rust builders (see [`crate::Counters`]).
pub(crate) static FILTERS_BUILT: AtomicU64 = AtomicU64::new(0);
/// Rust readers created for RocksDB.
pub(crate) static READERS_CREATED: AtomicU64 = AtomicU64::new(0);

#[cxx::bridge(namespace = "rocks_bridge")]
pub(crate) mod bridge {
    // Shared types.

    /// RocksDB's own `rocksdb::TableFileCreationReason` (`rocksdb/types.h`):
    /// declared here and as an extern C++ type below, so cxx checks at
    /// compile time that these variants and values are RocksDB's. The
    /// native harness (`ribbon-compat`) uses this same type.
    #[namespace = "rocksdb"]
    #[repr(i32)]
    enum TableFileCreationReason {
        /// A memtable flush.
        #[cxx_name = "kFlush"]
        Flush,
        /// A compaction output.
        #[cxx_name = "kCompaction"]
        Compaction,
        /// A file written during recovery.
        #[cxx_name = "kRecovery"]
        Recovery,
        /// Anything else (SstFileWriter, ingestion).
        #[cxx_name = "kMisc"]
        Misc,
    }

    /// What RocksDB's `FilterBuildingContext` says about the file being
    /// written.
    struct BuildContext {
        format_version: i32,
        /// `CompactionStyle`: 0 level, 1 universal, 2 FIFO, 3 none.
        compaction_style: i32,
        reason: TableFileCreationReason,
        level_at_creation: i32,
        optimize_filters_for_memory: bool,
        /// `BlockBasedTableOptions::detect_filter_construct_corruption`.
        detect_filter_construct_corruption: bool,
    }

    /// A finished filter and what C++ needs to replay RocksDB's cache
    /// charging and statuses around it.
    struct FinishedFilter {
        /// The filter block contents (empty: the always-false filter).
        filter: Vec<u8>,
        /// It is a Standard128 Ribbon filter (else, when not empty, a Bloom).
        ribbon: bool,
        /// The hash entries still had the checksum taken as they were added
        /// (always true without `detect_filter_construct_corruption`).
        entries_intact: bool,
    }

    /// A Rust policy id in parts: `name` + `bits_suffix` [+ `:level`].
    struct PolicyParts {
        /// `rust.RibbonFilter` or `rust.BloomFilter`.
        name: String,
        /// RocksDB's canonical bits-per-key suffix, `:10` or `:6.5`.
        bits_suffix: String,
        ribbon: bool,
        bloom_before_level: i32,
    }

    // Rust types and functions, called from the C++ policy.
    extern "Rust" {
        type RustBuilder;
        type RustReader;

        fn parse_policy_id(id: &str, parts: &mut PolicyParts) -> bool;
        fn names_no_filter_policy(id: &str) -> bool;
        fn new_builder(policy_id: &str, ctx: &BuildContext) -> Box<RustBuilder>;
        fn builds_filter(self: &RustBuilder) -> bool;
        fn add_key(self: &mut RustBuilder, key: &[u8]);
        fn add_key_and_alt(self: &mut RustBuilder, key: &[u8], alt: &[u8]);
        fn estimate_entries_added(self: &RustBuilder) -> usize;
        fn is_xxph3(self: &RustBuilder) -> bool;
        fn banding_bytes(self: &RustBuilder) -> usize;
        fn finish(self: &mut RustBuilder, bloom_fallback: bool) -> FinishedFilter;
        fn post_verify(self: &mut RustBuilder, filter: &[u8]) -> bool;
        fn calculate_space(self: &RustBuilder, num_entries: usize) -> usize;
        fn approximate_num_entries(self: &RustBuilder, bytes: usize) -> usize;
        fn estimated_fp_rate(self: &RustBuilder, num_entries: usize, bytes: usize) -> f64;

        fn new_reader(contents: &[u8]) -> Box<RustReader>;
        fn may_match(self: &RustReader, key: &[u8]) -> bool;
        fn may_match_hash(self: &RustReader, hash: u64) -> bool;
        /// Keys as (address, length) pairs of memory C++ keeps alive for the
        /// call; `out` gets 0 or 1 per key.
        unsafe fn may_match_batch(self: &RustReader, addresses: &[usize], lengths: &[usize], out: &mut [u8]);
    }

    // C++ functions, called from Rust.
    unsafe extern "C++" {
        include!("cpp/rust_filter_policy.h");
        include!("rocksdb/types.h");

        #[namespace = "rocksdb"]
        type TableFileCreationReason;

        fn register_rust_filter_policies();
        fn set_table_filter_policy(options_address: usize, id: &str) -> Result<()>;
        fn table_filter_policy_id(options_address: usize) -> String;
    }
}

/// The filter policy of a Rust policy id (its canonical id is its `id()`): the
/// `rust.` ids are RocksDB's built-in ids under another name.
pub(crate) fn parse_rust_policy(id: &str) -> Option<FilterPolicy> {
    FilterPolicy::parse(id)
        .ok()
        .flatten()
        .filter(|p| p.provider() == policy::Provider::Rust)
}

/// Whether `id` is one of the ids that mean "no filter policy" (`""`,
/// `nullptr`, ...), as `FilterPolicy::parse` says: the one owner of that
/// rule, asked by the C++ side too.
fn names_no_filter_policy(id: &str) -> bool {
    catch_unwind(|| matches!(FilterPolicy::parse(id), Ok(None))).unwrap_or(false)
}

fn parse_policy_id(id: &str, parts: &mut bridge::PolicyParts) -> bool {
    catch_unwind(|| parse_rust_policy(id))
        .ok()
        .flatten()
        .map(|policy| {
            parts.name = policy.name().to_string();
            parts.bits_suffix = policy.bits_per_key().suffix();
            match policy.kind() {
                policy::PolicyKind::Ribbon { bloom_before_level } => {
                    parts.ribbon = true;
                    parts.bloom_before_level = bloom_before_level;
                }
                _ => parts.ribbon = false,
            }
        })
        .is_some()
}

/// What the filter policies distinguish of RocksDB's creation reasons:
/// a flush, a compaction, and anything else.
impl From<bridge::TableFileCreationReason> for policy::CreationReason {
    fn from(r: bridge::TableFileCreationReason) -> Self {
        match r {
            bridge::TableFileCreationReason::Flush => policy::CreationReason::Flush,
            bridge::TableFileCreationReason::Compaction => policy::CreationReason::Compaction,
            _ => policy::CreationReason::Misc,
        }
    }
}

/// The RocksDB reason for each reason the policies distinguish.
impl From<policy::CreationReason> for bridge::TableFileCreationReason {
    fn from(r: policy::CreationReason) -> Self {
        match r {
            policy::CreationReason::Flush => bridge::TableFileCreationReason::Flush,
            policy::CreationReason::Compaction => bridge::TableFileCreationReason::Compaction,
            policy::CreationReason::Misc => bridge::TableFileCreationReason::Misc,
        }
    }
}

pub(crate) fn to_context(ctx: &bridge::BuildContext) -> policy::BuildContext {
    policy::BuildContext {
        format_version: ctx.format_version,
        compaction_style: match ctx.compaction_style {
            0 => policy::CompactionStyle::Level,
            1 => policy::CompactionStyle::Universal,
            2 => policy::CompactionStyle::Fifo,
            _ => policy::CompactionStyle::None,
        },
        reason: ctx.reason.into(),
        level_at_creation: ctx.level_at_creation,
        optimize_filters_for_memory: ctx.optimize_filters_for_memory,
    }
}

/// A filter builder for RocksDB; `None` inside when the policy writes no
/// filter for this file, or when it failed (then its filter is always-true).
///
/// With `detect_filter_construct_corruption` (FastLocalBloom and Ribbon
/// only, as in RocksDB's `XXPH3FilterBitsBuilder`) it keeps an XOR checksum
/// of the hash entries, taken as each is added, checks it against the
/// entries the filter is built from, and keeps those entries until
/// [`RustBuilder::post_verify`] has queried the finished filter for each.
pub struct RustBuilder {
    inner: Option<FilterBuilder>,
    failed: bool,
    detect: bool,
    /// XOR of the hash entries added since the last finish.
    checksum: u64,
    /// Entries already folded into `checksum`.
    checksummed: usize,
    /// The entries of the last filter, for `post_verify`.
    kept: Vec<u64>,
}

fn new_builder(policy_id: &str, ctx: &bridge::BuildContext) -> Box<RustBuilder> {
    let inner =
        catch_unwind(|| parse_rust_policy(policy_id).and_then(|p| FilterBuilder::new(&p, &to_context(ctx))))
            .ok()
            .flatten();
    let detect = ctx.detect_filter_construct_corruption && inner.as_ref().is_some_and(is_xxph3_kind);
    Box::new(RustBuilder {
        inner,
        failed: false,
        detect,
        checksum: 0,
        checksummed: 0,
        kept: Vec::new(),
    })
}

/// FastLocalBloom and Ribbon: RocksDB's builders over 64-bit hash entries,
/// the ones that charge the block cache and detect construction corruption
/// (the legacy Bloom does neither).
fn is_xxph3_kind(b: &FilterBuilder) -> bool {
    !matches!(b.kind(), policy::FilterKind::LegacyBloom(_))
}

/// RocksDB's `StandardBanding::EstimateMemoryUsage` for Standard128 Ribbon
/// (`util/ribbon_impl.h`): a 128-bit coefficient row and a 32-bit result
/// row per slot.
const BANDING_BYTES_PER_SLOT: usize = 16 + 4;

thread_local! {
    static CORRUPT_HASH_ENTRIES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Test-only fault injection (see [`crate::testing`]): while on, every
/// filter this thread finishes with `detect_filter_construct_corruption`
/// has a hash entry corrupted after the checksum was taken.
pub(crate) fn set_corrupt_hash_entries(on: bool) {
    CORRUPT_HASH_ENTRIES.with(|c| c.set(on));
}

impl RustBuilder {
    fn guarded<T>(&mut self, fallback: T, f: impl FnOnce(&mut FilterBuilder) -> T) -> T {
        let Some(b) = self.inner.as_mut() else {
            return fallback;
        };
        match catch_unwind(AssertUnwindSafe(|| f(b))) {
            Ok(v) => v,
            Err(_) => {
                self.failed = true;
                fallback
            }
        }
    }
    /// Folds the entries added since the last call into the checksum, as
    /// RocksDB's `AddHash` does for each entry it adds.
    fn checksum_new_entries(&mut self) {
        if !self.detect {
            return;
        }
        if let Some(b) = self.inner.as_ref() {
            let entries = b.hash_entries();
            for &h in entries.get(self.checksummed..).unwrap_or(&[]) {
                self.checksum ^= h;
            }
            self.checksummed = entries.len();
        }
    }
    fn builds_filter(&self) -> bool {
        self.inner.is_some()
    }
    fn is_xxph3(&self) -> bool {
        self.inner.as_ref().is_some_and(is_xxph3_kind)
    }
    fn add_key(&mut self, key: &[u8]) {
        self.guarded((), |b| b.add_key(key));
        self.checksum_new_entries();
    }
    fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        self.guarded((), |b| b.add_key_and_alt(key, alt));
        self.checksum_new_entries();
    }
    fn estimate_entries_added(&self) -> usize {
        let b = self.inner.as_ref();
        catch_unwind(AssertUnwindSafe(|| {
            b.map_or(0, FilterBuilder::estimate_entries_added)
        }))
        .unwrap_or(0)
    }
    /// The bytes RocksDB's Ribbon builder charges to the block cache for
    /// banding the current entries; 0 when finishing would not band.
    fn banding_bytes(&self) -> usize {
        let b = self.inner.as_ref();
        catch_unwind(AssertUnwindSafe(|| {
            b.map_or(0, |b| b.ribbon_banding_slots() as usize * BANDING_BYTES_PER_SLOT)
        }))
        .unwrap_or(0)
    }
    /// Builds the filter (its Bloom fall-back when `bloom_fallback`) and
    /// resets the builder; with detection on, checks the entries built from
    /// against the checksum and keeps them for `post_verify`.
    fn finish(&mut self, bloom_fallback: bool) -> bridge::FinishedFilter {
        FILTERS_BUILT.fetch_add(1, Relaxed);
        self.kept = Vec::new();
        let mut entries_intact = true;
        if self.detect {
            if let Some(b) = self.inner.as_mut() {
                let first = b.hash_entries().first().copied();
                if let (Some(first), true) = (first, CORRUPT_HASH_ENTRIES.with(std::cell::Cell::get)) {
                    // An entry the checksum never saw: RocksDB's test flips
                    // bit 0 of the first entry in place.
                    b.add_key_hash(first ^ 1);
                }
                self.kept = b.hash_entries().to_vec();
                entries_intact = self.kept.iter().fold(0, |x, h| x ^ h) == self.checksum;
            }
        }
        self.checksum = 0;
        self.checksummed = 0;
        let filter = self.guarded(ALWAYS_TRUE.to_vec(), |b| {
            if bloom_fallback {
                b.finish_bloom_fallback()
            } else {
                b.finish()
            }
        });
        let filter = if std::mem::take(&mut self.failed) {
            self.kept = Vec::new();
            ALWAYS_TRUE.to_vec()
        } else {
            filter
        };
        if !entries_intact {
            self.kept = Vec::new();
        }
        let ribbon = ribbon::trailer::marker(&filter) == Some(ribbon::trailer::Marker::Standard128Ribbon);
        bridge::FinishedFilter {
            filter,
            ribbon,
            entries_intact,
        }
    }
    /// RocksDB's `MaybePostVerify`: every kept hash entry must match the
    /// finished filter. Releases the kept entries.
    fn post_verify(&mut self, filter: &[u8]) -> bool {
        let kept = std::mem::take(&mut self.kept);
        if !self.detect {
            return true;
        }
        catch_unwind(|| {
            let reader = FilterReader::new(filter);
            kept.iter().all(|&h| reader.may_match_hash(h))
        })
        .unwrap_or(false)
    }
    fn calculate_space(&self, num_entries: usize) -> usize {
        let b = self.inner.as_ref();
        catch_unwind(AssertUnwindSafe(|| {
            b.map_or(0, |b| b.calculate_space(num_entries))
        }))
        .unwrap_or(0)
    }
    fn approximate_num_entries(&self, bytes: usize) -> usize {
        let b = self.inner.as_ref();
        catch_unwind(AssertUnwindSafe(|| {
            b.map_or(0, |b| b.approximate_num_entries(bytes))
        }))
        .unwrap_or(0)
    }
    fn estimated_fp_rate(&self, num_entries: usize, bytes: usize) -> f64 {
        let b = self.inner.as_ref();
        catch_unwind(AssertUnwindSafe(|| {
            b.map_or(1.0, |b| b.estimated_fp_rate(num_entries, bytes))
        }))
        .unwrap_or(1.0)
    }
}

/// A filter reader for RocksDB over filter contents RocksDB owns.
pub struct RustReader {
    reader: FilterReader<'static>,
}

fn new_reader(contents: &[u8]) -> Box<RustReader> {
    // SAFETY: RocksDB's `FilterPolicy::GetFilterBitsReader` contract: the
    // caller keeps the buffer behind `contents` alive and unchanged for the
    // lifetime of the returned reader (its built-in readers keep raw pointers
    // into it the same way). The C++ reader owns this Box and is destroyed
    // before RocksDB releases the block, so the extended lifetime never
    // outlives the data.
    let contents: &'static [u8] = unsafe { std::slice::from_raw_parts(contents.as_ptr(), contents.len()) };
    let reader = catch_unwind(|| FilterReader::new(contents)).unwrap_or(FilterReader::AlwaysTrue);
    READERS_CREATED.fetch_add(1, Relaxed);
    Box::new(RustReader { reader })
}

impl RustReader {
    fn may_match(&self, key: &[u8]) -> bool {
        catch_unwind(|| self.reader.may_match(key)).unwrap_or(true)
    }
    fn may_match_hash(&self, hash: u64) -> bool {
        catch_unwind(|| self.reader.may_match_hash(hash)).unwrap_or(true)
    }
    /// # Safety
    /// Each `(addresses[i], lengths[i])` is a readable byte range that stays
    /// valid for the call (C++ passes the `Slice`s of RocksDB's batch).
    unsafe fn may_match_batch(&self, addresses: &[usize], lengths: &[usize], out: &mut [u8]) {
        // SAFETY: forwarded from this function's contract.
        let keys = unsafe { keys_from_raw(addresses, lengths) };
        match catch_unwind(|| self.reader.may_match_many(&keys)) {
            Ok(answers) => {
                for (o, m) in out.iter_mut().zip(answers) {
                    *o = u8::from(m);
                }
            }
            Err(_) => out.fill(1),
        }
    }
}

/// The keys of a batch C++ passes as (address, length) pairs.
///
/// # Safety
/// Each `(addresses[i], lengths[i])` is a readable byte range that stays
/// valid for the lifetime the caller gives the result.
pub(crate) unsafe fn keys_from_raw<'a>(addresses: &[usize], lengths: &[usize]) -> Vec<&'a [u8]> {
    addresses
        .iter()
        .zip(lengths)
        .map(|(&a, &l)| {
            if l == 0 {
                &[][..]
            } else {
                // SAFETY: per this function's contract, `a..a + l` is a
                // live, readable byte range for `'a`.
                unsafe { std::slice::from_raw_parts(a as *const u8, l) }
            }
        })
        .collect()
}
