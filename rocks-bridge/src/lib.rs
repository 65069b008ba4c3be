//! Rust filters as RocksDB `FilterPolicy` objects: the pure-Rust `ribbon`
//! filters, and any filter of yours ([`custom`]).
//!
//! The C++ half (`cpp/rust_filter_policy.cc`) implements RocksDB's
//! `FilterPolicy`, `FilterBitsBuilder` and `FilterBitsReader` by calling a
//! Rust [`custom::Policy`] for every filter built and every query. The
//! `rust.*` policies below are such policies over the `ribbon` crate; their
//! `CompatibilityName()` is RocksDB's built-in family name,
//! `rocksdb.BuiltinBloomFilter`, so SST files written with the Rust policy
//! are read by RocksDB's native policies and the other way round.
//!
//! The policies are registered in RocksDB's `ObjectLibrary` under ids that
//! mirror the built-ins:
//!
//! | id | like |
//! |---|---|
//! | `rust.RibbonFilter:BITS[:BLOOM_BEFORE_LEVEL]` | `ribbonfilter:BITS[:BLOOM_BEFORE_LEVEL]` |
//! | `rust.BloomFilter:BITS` | `bloomfilter:BITS` |
//! | `rust.BalancedRibbon:BITS[:BLOOM_BEFORE_LEVEL]` | `ribbonfilter:BITS[:BLOOM_BEFORE_LEVEL]`, about 4 % smaller |
//!
//! so an options string or an OPTIONS file selects them, and each writes its
//! full id back (`rust.RibbonFilter:10:1`), so a reopen from OPTIONS keeps
//! the policy and its settings. `rust.BalancedRibbon` writes Balanced Ribbon
//! filters where `ribbonfilter` writes Standard128 Ribbon, with the same FP
//! rate, under a family of its own (`rust.BalancedRibbon`): RocksDB without
//! this crate reads its tables as tables without a filter
//! ([`ribbon::plugin::balanced_policy`]).
//!
//! ```no_run
//! use rocksdb::{BlockBasedOptions, Options, DB};
//!
//! let mut table = BlockBasedOptions::default();
//! table.set_format_version(7);
//! let mut opts = Options::default();
//! opts.create_if_missing(true);
//! opts.set_block_based_table_factory(&table);
//! rocks_bridge::set_filter_policy(&mut opts, "rust.RibbonFilter:10:1").unwrap();
//! let db = DB::open(&opts, "/tmp/rust-ribbon-db").unwrap();
//! db.put(b"key", b"value").unwrap();
//! ```

#![warn(missing_docs)]
mod balanced;
mod bloom_before_level;
mod builtin;
mod counters;
pub mod custom;
mod family_reader;
mod ffi;
mod rocksdb_ffi;

/// RocksDB's `TableFileCreationReason`, declared once for every cxx bridge
/// in the workspace and checked against RocksDB's header at compile time.
pub use ffi::bridge::TableFileCreationReason;

use rocksdb::{AsRawPtr, Options};
use std::fmt;

/// A policy id RocksDB rejected, or options without a block-based table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// Registers the `rust.*` policies in RocksDB's `ObjectLibrary`. Idempotent
/// and thread-safe. Call it before RocksDB parses an options string or
/// OPTIONS file that names them (`set_filter_policy` and
/// [`custom::register_policy`] call it for you).
pub fn register() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        builtin::register();
        balanced::register();
    });
}

/// Sets the filter policy of `opts`' block-based table factory to `policy`,
/// any id RocksDB's `FilterPolicy::CreateFromString` accepts: the Rust ids
/// above, or RocksDB's own (`ribbonfilter:10`, `bloomfilter:10`, …), and
/// returns the id RocksDB will write to the OPTIONS file (`None` when the
/// filter policy was removed).
///
/// Call it after `Options::set_block_based_table_factory`, which replaces
/// the table factory (and its filter policy); the factory's other settings
/// are kept as they are (RocksDB sanitises a factory when it is set through
/// the table options API, not when an options string reconfigures it). `""` and `nullptr` remove the filter policy. Errors, leaving
/// `opts` unchanged, when `policy` names no policy RocksDB knows (RocksDB
/// itself would quietly leave the table without a filter) or the table
/// factory is not block-based.
///
/// It goes through RocksDB's public C API only: the options are reconfigured
/// in place from the options string
/// `block_based_table_factory={filter_policy=ID}`, as
/// `rocksdb_get_options_from_string` does, with `opts` as both its base and
/// its result.
pub fn set_filter_policy(opts: &mut Options, policy: &str) -> Result<Option<String>, Error> {
    register();
    let id = rocksdb_ffi::bridge::policy_id(policy).map_err(|e| Error(e.what().to_string()))?;
    let value = if id.is_empty() { "nullptr" } else { id.as_str() };
    // An options string (and so an OPTIONS file) cannot carry these.
    if value.contains([';', '{', '}', '=']) {
        return Err(Error(format!(
            "the filter policy id {value:?} contains ';', '{{', '}}' or '=', which an options string cannot carry"
        )));
    }
    let config = std::ffi::CString::new(format!("block_based_table_factory={{filter_policy={value}}}"))
        .map_err(|_| Error(format!("the filter policy id {policy:?} contains a NUL byte")))?;
    let mut error: *mut std::ffi::c_char = std::ptr::null_mut();
    // SAFETY: `opts` is borrowed mutably for the call, so the
    // `rocksdb_options_t` it owns is alive and nothing else uses it; the C
    // API reads the base before it assigns the result (GetOptionsFromString
    // copies the base first), so one object may be both; `config` is a
    // NUL-terminated string that outlives the call; `error` is a valid
    // out-pointer that RocksDB sets to a malloc'd message or leaves null.
    unsafe {
        let options = opts.as_raw_ptr();
        librocksdb_sys::rocksdb_get_options_from_string(options, config.as_ptr(), options, &mut error);
    }
    if !error.is_null() {
        // SAFETY: RocksDB set `error` to a NUL-terminated string it
        // allocated, which `rocksdb_free` releases; it is read before.
        let message = unsafe {
            let text = std::ffi::CStr::from_ptr(error).to_string_lossy().into_owned();
            librocksdb_sys::rocksdb_free(error.cast());
            text
        };
        return Err(Error(format!(
            "RocksDB refused the filter policy {policy:?}: {message}"
        )));
    }
    Ok((!id.is_empty()).then_some(id))
}

/// The canonical id of a Rust policy id (`rust.RibbonFilter:10` gives
/// `rust.RibbonFilter:10:0`, `rust.BalancedRibbon:10` gives
/// `rust.BalancedRibbon:10:0`), or `None` when it is not one.
pub fn canonical_id(id: &str) -> Option<String> {
    builtin::parse_rust_policy(id).map(|p| p.id()).or_else(|| {
        ribbon::plugin::balanced_policy::BalancedPolicy::parse(id)
            .ok()
            .map(|p| p.id())
    })
}

/// How much work RocksDB has handed to the Rust policy in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Filter blocks built by Rust.
    pub filters_built: u64,
    /// Filter readers created over RocksDB's blocks.
    pub readers_created: u64,
}

/// The process-wide [`Counters`], to see (or test) that RocksDB really
/// called into Rust.
pub fn counters() -> Counters {
    use std::sync::atomic::Ordering::Relaxed;
    Counters {
        filters_built: counters::FILTERS_BUILT.load(Relaxed),
        readers_created: counters::READERS_CREATED.load(Relaxed),
    }
}

/// Fault injection for tests of `detect_filter_construct_corruption`.
///
/// RocksDB injects construction corruptions through test sync points, which
/// release builds compile out; these hooks inject the same corruption into
/// the Rust policy's builders. They cost one thread-local read per filter
/// finished with detection on, and nothing otherwise.
pub mod testing {
    /// While `on`, every filter this thread finishes with
    /// `detect_filter_construct_corruption` gets one hash entry that its
    /// checksum never saw (bit 0 of the first entry flipped, added before
    /// building), as RocksDB's `XXPH3FilterBitsBuilder::Finish::TamperHashEntries`
    /// sync point corrupts the entries. The build then fails with RocksDB's
    /// `Corruption: Filter's hash entries checksum mismatched`. Filters are
    /// finished on the thread that writes the table: the caller's for an
    /// `SstFileWriter`, a background thread for flushes and compactions.
    pub fn corrupt_hash_entries_on_this_thread(on: bool) {
        crate::builtin::set_corrupt_hash_entries(on);
    }
}

// The bridge calls into RocksDB's static library from C++; name the crate
// that links it so the linker always sees it.
extern crate librocksdb_sys;
