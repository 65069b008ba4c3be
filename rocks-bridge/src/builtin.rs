//! The `rust.RibbonFilter` and `rust.BloomFilter` policies: RocksDB's
//! built-in formats, built and read by the `ribbon` crate, as one more user
//! of [`custom::Policy`]. They store their filters under RocksDB's built-in
//! family name, so files written by either side are read by the other, and
//! they follow RocksDB's construction protocol ([`custom::Construction`]).

use crate::bloom_before_level::{self, BLOOM_BEFORE_LEVEL};
use crate::counters::FILTERS_BUILT;
use crate::custom::{self, Builder, Construction, FilterBlock, Finished, Policy, Reader};
use crate::family_reader::FamilyReader;
use ribbon::plugin::Family;
use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::format::{FilterReader, ALWAYS_TRUE_FILTER};
use ribbon::rocksdb::policy::{self, BuildContext, FilterPolicy, PolicyKind, Provider};
use std::cell::Cell;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};
use std::sync::Arc;

/// Registers both ids in the policy registry (once per process).
pub(crate) fn register() {
    for name in ["rust.RibbonFilter", "rust.BloomFilter"] {
        let factory = Arc::new(move |args: Option<&str>| {
            let id = args.map_or_else(|| name.to_string(), |a| format!("{name}:{a}"));
            parse_rust_policy(&id)
                .filter(|p| p.name() == name)
                .map(|p| Arc::new(BuiltinPolicy::new(p)) as Arc<dyn Policy>)
                .ok_or_else(|| format!("invalid Rust filter policy: {id}"))
        });
        custom::register_builtin(name, factory).expect("registered once");
    }
}

/// The filter policy of a Rust policy id (its canonical id is its `id()`): the
/// `rust.` ids are RocksDB's built-in ids under another name.
pub(crate) fn parse_rust_policy(id: &str) -> Option<FilterPolicy> {
    FilterPolicy::parse_optional(id)
        .ok()
        .flatten()
        .filter(|p| p.provider() == Provider::Rust)
}

/// A `rust.*` policy. A Ribbon policy's `bloom_before_level` can change on
/// the live policy (SetOptions), as with RocksDB's own `ribbonfilter`.
struct BuiltinPolicy {
    policy: FilterPolicy,
    bloom_before_level: AtomicI32,
}

impl BuiltinPolicy {
    fn new(policy: FilterPolicy) -> Self {
        let level = match policy.kind() {
            PolicyKind::Ribbon { bloom_before_level } => bloom_before_level,
            _ => 0,
        };
        Self {
            policy,
            bloom_before_level: AtomicI32::new(level),
        }
    }
    fn is_ribbon(&self) -> bool {
        matches!(self.policy.kind(), PolicyKind::Ribbon { .. })
    }
    /// The policy with the current `bloom_before_level`.
    fn current(&self) -> FilterPolicy {
        if !self.is_ribbon() {
            return self.policy;
        }
        let bits = f64::from(self.policy.bits_per_key().millibits_per_key()) / 1000.0;
        FilterPolicy::ribbon(bits, self.bloom_before_level.load(Relaxed)).with_provider(Provider::Rust)
    }
}

impl Policy for BuiltinPolicy {
    fn id(&self) -> String {
        self.current().id()
    }
    fn compatibility_name(&self) -> String {
        Family::Builtin.compatibility_name().into()
    }
    fn builder(&self, ctx: &BuildContext) -> Option<Box<dyn Builder>> {
        let inner = FilterBuilder::new(&self.current(), ctx)?;
        Some(Box::new(BuiltinBuilder {
            inner,
            checksum: 0,
            checksummed: 0,
            kept: Vec::new(),
        }))
    }
    fn reader(&self, filter: FilterBlock) -> Box<dyn Reader> {
        Box::new(FamilyReader::new(filter, Family::Builtin))
    }
    fn always_true_filter(&self) -> Vec<u8> {
        ALWAYS_TRUE_FILTER.to_vec()
    }
    fn mutable_options(&self) -> Vec<String> {
        if self.is_ribbon() {
            vec![BLOOM_BEFORE_LEVEL.into()]
        } else {
            Vec::new()
        }
    }
    fn set_option(&self, name: &str, value: &str) -> Result<(), String> {
        if name != BLOOM_BEFORE_LEVEL || !self.is_ribbon() {
            return Err(format!("{} has no option {name:?}", self.id()));
        }
        self.bloom_before_level
            .store(bloom_before_level::parse(value)?, Relaxed);
        Ok(())
    }
    fn option(&self, name: &str) -> Option<String> {
        (name == BLOOM_BEFORE_LEVEL && self.is_ribbon())
            .then(|| self.bloom_before_level.load(Relaxed).to_string())
    }
}

/// A builder of one of RocksDB's formats. With
/// `detect_filter_construct_corruption` (FastLocalBloom and Ribbon only, as
/// in RocksDB's `XXPH3FilterBitsBuilder`) it keeps an XOR checksum of the
/// hash entries, taken as each is added, checks it against the entries the
/// filter is built from, and keeps those entries until
/// [`Construction::post_verify`] has queried the finished filter for each.
/// (The checksum is taken whether or not detection is on: one XOR per key.)
struct BuiltinBuilder {
    inner: FilterBuilder,
    /// XOR of the hash entries added since the last finish.
    checksum: u64,
    /// Entries already folded into `checksum`.
    checksummed: usize,
    /// The entries of the last filter, for `post_verify`.
    kept: Vec<u64>,
}

/// RocksDB's `StandardBanding::EstimateMemoryUsage` for Standard128 Ribbon
/// (`util/ribbon_impl.h`): a 128-bit coefficient row and a 32-bit result
/// row per slot.
const BANDING_BYTES_PER_SLOT: usize = 16 + 4;

thread_local! {
    static CORRUPT_HASH_ENTRIES: Cell<bool> = const { Cell::new(false) };
}

/// Test-only fault injection (see [`crate::testing`]): while on, every
/// filter this thread finishes with `detect_filter_construct_corruption`
/// has a hash entry corrupted after the checksum was taken.
pub(crate) fn set_corrupt_hash_entries(on: bool) {
    CORRUPT_HASH_ENTRIES.with(|c| c.set(on));
}

impl BuiltinBuilder {
    /// Folds the entries added since the last call into the checksum, as
    /// RocksDB's `AddHash` does for each entry it adds.
    fn checksum_new_entries(&mut self) {
        let entries = self.inner.hash_entries();
        for &h in entries.get(self.checksummed..).unwrap_or(&[]) {
            self.checksum ^= h;
        }
        self.checksummed = entries.len();
    }
    /// FastLocalBloom and Ribbon: RocksDB's builders over 64-bit hash
    /// entries, the ones that charge the block cache and detect construction
    /// corruption (the legacy Bloom does neither).
    fn is_xxph3(&self) -> bool {
        !matches!(self.inner.kind(), policy::FilterKind::LegacyBloom(_))
    }
}

impl Builder for BuiltinBuilder {
    fn add_key(&mut self, key: &[u8]) {
        self.inner.add_key(key);
        self.checksum_new_entries();
    }
    fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        self.inner.add_key_and_alt(key, alt);
        self.checksum_new_entries();
    }
    fn estimate_entries_added(&self) -> usize {
        self.inner.estimate_entries_added()
    }
    fn finish(&mut self) -> Vec<u8> {
        self.finish_constructed(false, false).filter
    }
    fn calculate_space(&self, num_entries: usize) -> usize {
        self.inner.calculate_space(num_entries)
    }
    fn approximate_num_entries(&self, bytes: usize) -> usize {
        self.inner.approximate_num_entries(bytes)
    }
    fn estimated_fp_rate(&self, num_entries: usize, bytes: usize) -> f64 {
        self.inner.estimated_fp_rate(num_entries, bytes)
    }
    fn construction(&mut self) -> Option<&mut dyn Construction> {
        if self.is_xxph3() {
            Some(self)
        } else {
            None
        }
    }
}

impl Construction for BuiltinBuilder {
    fn banding_bytes(&self) -> usize {
        self.inner.ribbon_banding_slots() as usize * BANDING_BYTES_PER_SLOT
    }
    fn finish_constructed(&mut self, bloom_fallback: bool, detect: bool) -> Finished {
        FILTERS_BUILT.fetch_add(1, Relaxed);
        self.kept = Vec::new();
        let mut entries_intact = true;
        if detect {
            let first = self.inner.hash_entries().first().copied();
            if let (Some(first), true) = (first, CORRUPT_HASH_ENTRIES.with(Cell::get)) {
                // An entry the checksum never saw: RocksDB's test flips bit 0
                // of the first entry in place.
                // A first entry exists: this builder takes 64-bit hashes.
                let added = self.inner.add_key_hash(first ^ 1);
                debug_assert!(added.is_ok());
            }
            self.kept = self.inner.hash_entries().to_vec();
            entries_intact = self.kept.iter().fold(0, |x, h| x ^ h) == self.checksum;
            if !entries_intact {
                self.kept = Vec::new();
            }
        }
        self.checksum = 0;
        self.checksummed = 0;
        let filter = if bloom_fallback {
            self.inner.finish_bloom_fallback()
        } else {
            self.inner.finish()
        };
        let banded = ribbon::rocksdb::trailer::marker(&filter)
            == Some(ribbon::rocksdb::trailer::Marker::Standard128Ribbon);
        Finished {
            filter,
            banded,
            entries_intact,
        }
    }
    fn post_verify(&mut self, filter: &[u8]) -> bool {
        let kept = std::mem::take(&mut self.kept);
        let reader = FilterReader::new(filter);
        kept.iter().all(|&h| reader.may_match_hash(h))
    }
}
