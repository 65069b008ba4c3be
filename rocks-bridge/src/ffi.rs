//! The cxx bridge between RocksDB's filter interfaces (C++, in
//! `cpp/rust_filter_policy.cc`) and the Rust policies: every policy, the
//! `rust.*` ones and the ones users register, is a [`Policy`] behind a
//! [`PolicyHandle`].
//!
//! Contract for every function C++ calls: it never unwinds into C++. A panic
//! is caught; a builder then yields its family's "always true" filter and a
//! reader answers "may match", so a failure can cost filtering but never a
//! false negative.

use crate::custom::{self, FilterBlock, Policy};
use ribbon::rocksdb::policy::{self, FilterPolicy};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

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
    /// charging and statuses around it (`custom::Finished`).
    struct FinishedFilter {
        /// The filter block contents (empty: no filter).
        filter: Vec<u8>,
        /// It was banded (a Ribbon filter); else, when not empty, a Bloom.
        banded: bool,
        /// The hash entries still had the checksum taken as they were added
        /// (always true without detection).
        entries_intact: bool,
    }

    // Rust types and functions, called from the C++ policy.
    extern "Rust" {
        type PolicyHandle;
        type BuilderHandle;
        type ReaderHandle;

        fn names_no_filter_policy(id: &str) -> bool;

        fn make_policy(id: &str) -> Result<Box<PolicyHandle>>;
        fn name(self: &PolicyHandle) -> &str;
        fn id(self: &PolicyHandle) -> String;
        fn compatibility_name(self: &PolicyHandle) -> &str;
        fn mutable_options(self: &PolicyHandle) -> Vec<String>;
        fn set_option(self: &PolicyHandle, name: &str, value: &str) -> Result<()>;
        fn option(self: &PolicyHandle, name: &str) -> String;
        fn new_builder(self: &PolicyHandle, ctx: &BuildContext) -> Box<BuilderHandle>;
        fn new_reader(self: &PolicyHandle, contents: &[u8]) -> Box<ReaderHandle>;

        fn builds_filter(self: &BuilderHandle) -> bool;
        fn add_key(self: &mut BuilderHandle, key: &[u8]);
        fn add_key_and_alt(self: &mut BuilderHandle, key: &[u8], alt: &[u8]);
        fn estimate_entries_added(self: &BuilderHandle) -> usize;
        fn calculate_space(self: &BuilderHandle, num_entries: usize) -> usize;
        fn approximate_num_entries(self: &BuilderHandle, bytes: usize) -> usize;
        fn estimated_fp_rate(self: &BuilderHandle, num_entries: usize, bytes: usize) -> f64;
        fn follows_construction_protocol(self: &mut BuilderHandle) -> bool;
        fn banding_bytes(self: &mut BuilderHandle) -> usize;
        fn finish_constructed(self: &mut BuilderHandle, bloom_fallback: bool, detect: bool)
            -> FinishedFilter;
        fn post_verify(self: &mut BuilderHandle, filter: &[u8]) -> bool;

        fn may_match(self: &ReaderHandle, key: &[u8]) -> bool;
        /// Keys as (address, length) pairs of memory C++ keeps alive for the
        /// call; `out` gets 0 or 1 per key.
        unsafe fn may_match_batch(
            self: &ReaderHandle,
            addresses: &[usize],
            lengths: &[usize],
            out: &mut [u8],
        );
    }

    // RocksDB's type, checked against the shared enum above (the C++
    // functions Rust calls are in `crate::rocksdb_ffi`).
    unsafe extern "C++" {
        include!("rocksdb/types.h");

        #[namespace = "rocksdb"]
        type TableFileCreationReason;
    }
}

/// Whether `id` is one of the ids that mean "no filter policy" (`""`,
/// `nullptr`, ...), as `FilterPolicy::parse_optional` says: the one owner of that
/// rule, asked by the C++ side too.
fn names_no_filter_policy(id: &str) -> bool {
    catch_unwind(|| matches!(FilterPolicy::parse_optional(id), Ok(None))).unwrap_or(false)
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

fn to_context(ctx: &bridge::BuildContext) -> policy::BuildContext {
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

/// A registered policy as the C++ policy holds it, with the strings RocksDB
/// asks for by pointer computed once.
pub struct PolicyHandle {
    policy: Arc<dyn Policy>,
    name: String,
    compatibility_name: String,
    always_true: Arc<[u8]>,
}

fn make_policy(id: &str) -> Result<Box<PolicyHandle>, String> {
    let (name, policy) = custom::make_policy(id)?;
    let (compatibility_name, always_true) = catch_unwind(AssertUnwindSafe(|| {
        (policy.compatibility_name(), policy.always_true_filter())
    }))
    .map_err(|_| format!("filter policy {id:?} panicked"))?;
    if compatibility_name.is_empty() {
        return Err(format!("filter policy {id:?} has an empty compatibility name"));
    }
    Ok(Box::new(PolicyHandle {
        policy,
        name,
        compatibility_name,
        always_true: always_true.into(),
    }))
}

impl PolicyHandle {
    fn name(&self) -> &str {
        &self.name
    }
    /// The policy's id now (a mutable option may be part of it); its name
    /// if the policy panics.
    fn id(&self) -> String {
        catch_unwind(AssertUnwindSafe(|| self.policy.id())).unwrap_or_else(|_| self.name.clone())
    }
    fn compatibility_name(&self) -> &str {
        &self.compatibility_name
    }
    fn mutable_options(&self) -> Vec<String> {
        catch_unwind(AssertUnwindSafe(|| self.policy.mutable_options())).unwrap_or_default()
    }
    fn set_option(&self, name: &str, value: &str) -> Result<(), String> {
        catch_unwind(AssertUnwindSafe(|| self.policy.set_option(name, value)))
            .unwrap_or_else(|_| Err(format!("setting {name:?} panicked")))
    }
    fn option(&self, name: &str) -> String {
        catch_unwind(AssertUnwindSafe(|| self.policy.option(name)))
            .ok()
            .flatten()
            .unwrap_or_default()
    }
    fn new_builder(&self, ctx: &bridge::BuildContext) -> Box<BuilderHandle> {
        let ctx = to_context(ctx);
        let (inner, failed) = match catch_unwind(AssertUnwindSafe(|| self.policy.builder(&ctx))) {
            Ok(inner) => (inner, false),
            Err(_) => (None, true),
        };
        Box::new(BuilderHandle {
            inner,
            failed,
            always_true: Arc::clone(&self.always_true),
        })
    }
    fn new_reader(&self, contents: &[u8]) -> Box<ReaderHandle> {
        if contents == &*self.always_true {
            return Box::new(ReaderHandle { inner: None });
        }
        // SAFETY: RocksDB's `GetFilterBitsReader` contract: the filter block
        // behind `contents` stays alive and unchanged for the lifetime of the
        // reader made over it; the C++ reader owns the returned Box (and so
        // the block handle) and is destroyed before RocksDB releases the block.
        let block = unsafe { FilterBlock::borrowed(contents) };
        let inner = catch_unwind(AssertUnwindSafe(|| self.policy.reader(block))).ok();
        Box::new(ReaderHandle { inner })
    }
}

/// A builder for RocksDB. `inner` is `None` when the policy writes no filter
/// for this file; `failed` once it (or making it) panicked: it then writes
/// the family's always-true filter, and is not trusted again.
pub struct BuilderHandle {
    inner: Option<Box<dyn custom::Builder>>,
    failed: bool,
    always_true: Arc<[u8]>,
}

impl BuilderHandle {
    fn guarded<T>(&mut self, fallback: T, f: impl FnOnce(&mut dyn custom::Builder) -> T) -> T {
        if self.failed {
            return fallback;
        }
        let Some(b) = self.inner.as_mut() else {
            return fallback;
        };
        match catch_unwind(AssertUnwindSafe(|| f(b.as_mut()))) {
            Ok(v) => v,
            Err(_) => {
                self.failed = true;
                fallback
            }
        }
    }
    fn asked<T>(&self, fallback: T, f: impl FnOnce(&dyn custom::Builder) -> T) -> T {
        match self.inner.as_deref() {
            Some(b) if !self.failed => catch_unwind(AssertUnwindSafe(|| f(b))).unwrap_or(fallback),
            _ => fallback,
        }
    }
    fn builds_filter(&self) -> bool {
        self.inner.is_some() || self.failed
    }
    fn add_key(&mut self, key: &[u8]) {
        self.guarded((), |b| b.add_key(key))
    }
    fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        self.guarded((), |b| b.add_key_and_alt(key, alt))
    }
    fn estimate_entries_added(&self) -> usize {
        self.asked(0, |b| b.estimate_entries_added())
    }
    fn calculate_space(&self, num_entries: usize) -> usize {
        self.asked(self.always_true.len(), |b| b.calculate_space(num_entries))
    }
    fn approximate_num_entries(&self, bytes: usize) -> usize {
        self.asked(0, |b| b.approximate_num_entries(bytes))
    }
    fn estimated_fp_rate(&self, num_entries: usize, bytes: usize) -> f64 {
        self.asked(1.0, |b| b.estimated_fp_rate(num_entries, bytes))
    }
    fn follows_construction_protocol(&mut self) -> bool {
        self.guarded(false, |b| b.construction().is_some())
    }
    fn banding_bytes(&mut self) -> usize {
        self.guarded(0, |b| b.construction().map_or(0, |c| c.banding_bytes()))
    }
    /// [`custom::Construction::finish_constructed`]; after a panic, the
    /// always-true filter with intact entries (nothing left to check).
    fn finish_constructed(&mut self, bloom_fallback: bool, detect: bool) -> bridge::FinishedFilter {
        let finished = self.guarded(None, |b| {
            Some(match b.construction() {
                Some(c) => c.finish_constructed(bloom_fallback, detect),
                None => custom::Finished {
                    filter: b.finish(),
                    banded: false,
                    entries_intact: true,
                },
            })
        });
        let f = match finished {
            Some(f) if !self.failed => f,
            _ => custom::Finished {
                filter: self.always_true.to_vec(),
                banded: false,
                entries_intact: true,
            },
        };
        bridge::FinishedFilter {
            filter: f.filter,
            banded: f.banded,
            entries_intact: f.entries_intact,
        }
    }
    fn post_verify(&mut self, filter: &[u8]) -> bool {
        self.guarded(false, |b| b.construction().is_none_or(|c| c.post_verify(filter)))
    }
}

/// A reader for RocksDB; `None` inside answers "may match" (the
/// always-true filter, or a reader that could not be made).
pub struct ReaderHandle {
    inner: Option<Box<dyn custom::Reader>>,
}

impl ReaderHandle {
    fn may_match(&self, key: &[u8]) -> bool {
        self.inner
            .as_ref()
            .is_none_or(|r| catch_unwind(AssertUnwindSafe(|| r.may_match(key))).unwrap_or(true))
    }
    /// # Safety
    /// Each `(addresses[i], lengths[i])` is a readable byte range that stays
    /// valid for the call (C++ passes the `Slice`s of RocksDB's batch).
    unsafe fn may_match_batch(&self, addresses: &[usize], lengths: &[usize], out: &mut [u8]) {
        let Some(r) = self.inner.as_ref() else {
            out.fill(1);
            return;
        };
        if addresses.len() != lengths.len() || lengths.len() != out.len() {
            // Not what C++ passes; answer "may match" rather than guess.
            out.fill(1);
            return;
        }
        // C++ passes MultiGet's batches of at most 32 keys: keys and answers
        // live on the stack, chunk by chunk.
        const CHUNK: usize = 32;
        let mut keys: [&[u8]; CHUNK] = [&[]; CHUNK];
        let mut answers = [true; CHUNK];
        for ((addresses, lengths), out) in addresses
            .chunks(CHUNK)
            .zip(lengths.chunks(CHUNK))
            .zip(out.chunks_mut(CHUNK))
        {
            let n = addresses.len();
            for (k, (&a, &l)) in keys.iter_mut().zip(addresses.iter().zip(lengths)) {
                // SAFETY: forwarded from this function's contract: `a..a + l`
                // is a live, readable byte range for the call.
                *k = unsafe { key_from_raw(a, l) };
            }
            let (keys, answers) = (&keys[..n], &mut answers[..n]);
            answers.fill(true);
            if catch_unwind(AssertUnwindSafe(|| r.may_match_many(keys, answers))).is_err() {
                answers.fill(true);
            }
            for (o, &m) in out.iter_mut().zip(answers.iter()) {
                *o = u8::from(m);
            }
        }
    }
}

/// One key of a batch C++ passes as an (address, length) pair.
///
/// # Safety
/// `address..address + len` is a readable byte range that stays valid for
/// the lifetime the caller gives the result.
unsafe fn key_from_raw<'a>(address: usize, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts(address as *const u8, len) }
    }
}
