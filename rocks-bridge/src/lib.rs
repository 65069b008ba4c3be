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
//!
//! # Which rust-rocksdb
//!
//! One feature picks the rust-rocksdb release this crate plugs into; enable
//! exactly one (a mismatch is a compile-time error):
//!
//! | feature | rust-rocksdb | librocksdb-sys | RocksDB |
//! |---|---|---|---|
//! | `rocksdb-0-25` (default) | 0.25 | 0.19 | 11.8.1 |
//! | `rocksdb-0-24` | 0.24 | 0.17.3 | 10.4.2 |
//!
//! Cargo links one `librocksdb-sys` per build, so this crate asks for the
//! range of both releases and your own `rocksdb` dependency picks which.
//! A rust-rocksdb 0.24 project writes:
//!
//! ```toml
//! rocksdb = "0.24"
//! rocks-bridge = { version = "0.1", default-features = false, features = ["rocksdb-0-24"] }
//! ```
//!
//! rust-rocksdb 0.24 gives no access to the RocksDB object behind an
//! `Options`, so [`set_filter_policy`] exists only with `rocksdb-0-25`.
//! With either, [`options_from_strings`] builds `Options` from RocksDB options
//! strings (the filter policy among them), and `Options::load_latest`
//! reopens a database from its OPTIONS file once [`register`] has run.
//! [`ROCKSDB_VERSION`] says which RocksDB a build has.

#![warn(missing_docs)]

// Exactly one rust-rocksdb feature, and the RocksDB that feature's release
// ships: build.rs reads the version from the headers the C++ half compiles
// against (rocks_bridge_rocksdb_major, ROCKS_BRIDGE_ROCKSDB_VERSION).
#[cfg(all(feature = "rocksdb-0-24", feature = "rocksdb-0-25"))]
compile_error!(
    "rocks-bridge: the features `rocksdb-0-24` and `rocksdb-0-25` are both enabled; enable exactly one \
     (rust-rocksdb 0.24: `default-features = false, features = [\"rocksdb-0-24\"]`)"
);
#[cfg(not(any(feature = "rocksdb-0-24", feature = "rocksdb-0-25")))]
compile_error!(
    "rocks-bridge: enable one of the features `rocksdb-0-25` (rust-rocksdb 0.25, the default) \
     and `rocksdb-0-24` (rust-rocksdb 0.24)"
);
#[cfg(all(feature = "rocksdb-0-24", not(rocks_bridge_rocksdb_major = "10")))]
compile_error!(concat!(
    "rocks-bridge: the feature `rocksdb-0-24` is for rust-rocksdb 0.24 (RocksDB 10.4), but this build's \
     librocksdb-sys ships RocksDB ",
    env!("ROCKS_BRIDGE_ROCKSDB_VERSION"),
    "; with rust-rocksdb 0.25 use the default feature `rocksdb-0-25`"
));
#[cfg(all(feature = "rocksdb-0-25", not(rocks_bridge_rocksdb_major = "11")))]
compile_error!(concat!(
    "rocks-bridge: the feature `rocksdb-0-25` is for rust-rocksdb 0.25 (RocksDB 11.8), but this build's \
     librocksdb-sys ships RocksDB ",
    env!("ROCKS_BRIDGE_ROCKSDB_VERSION"),
    "; with rust-rocksdb 0.24 use `default-features = false, features = [\"rocksdb-0-24\"]`"
));

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

#[cfg(feature = "rocksdb-0-25")]
use rocksdb::AsRawPtr;
use rocksdb::{Cache, ColumnFamilyDescriptor, Env, Options};
use std::fmt;

/// The version of the RocksDB this build links (`"11.8.1"`, `"10.4.2"`),
/// read from its headers when the crate was built.
pub const ROCKSDB_VERSION: &str = env!("ROCKS_BRIDGE_ROCKSDB_VERSION");

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
/// its result. It needs rust-rocksdb's raw-pointer access, so it exists with
/// the `rocksdb-0-25` feature only; with `rocksdb-0-24`, see
/// [`options_from_strings`].
#[cfg(feature = "rocksdb-0-25")]
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

/// `Options` for a database and its column families, built from RocksDB
/// options strings by RocksDB's own parser, as `Options::load_latest` would
/// load them from an OPTIONS file: `db_options` holds `DBOptions`
/// (`"create_if_missing=true;create_missing_column_families=true"`), and each
/// `(name, options)` of `column_families` one family's `ColumnFamilyOptions`
/// (`"block_based_table_factory={filter_policy=rust.RibbonFilter:10:1}"`).
/// Open the database with the returned descriptors:
/// `DB::open_cf_descriptors(&opts, path, families)`.
///
/// The `default` family comes first in the result; when `column_families`
/// does not name it, it gets RocksDB's default options (no filter). `cache`
/// becomes the block cache of every family's block-based table, as with
/// `Options::load_latest`.
///
/// Every setting starts from RocksDB's defaults (those of
/// `Options::default()`) and only the strings change them: unlike
/// [`set_filter_policy`], which changes the filter policy of `Options` set up
/// through the Rust API and keeps the rest, this builds new `Options`, and a
/// setting an options string cannot say (a Rust comparator or merge
/// operator, an `Env`) must be made on the result. rust-rocksdb 0.24 has no
/// access to a family descriptor's options, so there the strings must say
/// everything a family needs.
///
/// It exists for rust-rocksdb 0.24 (the `rocksdb-0-24` feature), whose
/// `Options` give no access to RocksDB's options object, so that a filter
/// policy (and the rest) can only reach them through an OPTIONS file; it
/// works the same with 0.25. How: it registers the `rust.*` policies
/// ([`register`]), has RocksDB parse the strings (`GetDBOptionsFromString`,
/// `GetColumnFamilyOptionsFromString`, unknown option names refused) and
/// write them as an OPTIONS file (`PersistRocksDBOptions`, which reads the
/// file back and checks every option against what it wrote) in a new
/// private temporary directory, loads that with `Options::load_latest`, and
/// removes the directory.
///
/// Errors, with RocksDB's message, when a string does not parse, names an
/// option or a filter policy RocksDB does not know, or names a family twice,
/// or when the temporary directory cannot be written.
///
/// ```no_run
/// use rocksdb::{Cache, DB};
///
/// let cache = Cache::new_lru_cache(64 << 20);
/// let (opts, families) = rocks_bridge::options_from_strings(
///     "create_if_missing=true;create_missing_column_families=true",
///     &[
///         ("default", "block_based_table_factory={filter_policy=rust.RibbonFilter:10:1}"),
///         ("events", "block_based_table_factory={filter_policy=rust.BalancedRibbon:10}"),
///     ],
///     &cache,
/// )?;
/// let db = DB::open_cf_descriptors(&opts, "/tmp/rust-ribbon-db", families)?;
/// db.put_cf(db.cf_handle("events").unwrap(), b"key", b"value")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn options_from_strings(
    db_options: &str,
    column_families: &[(&str, &str)],
    cache: &Cache,
) -> Result<(Options, Vec<ColumnFamilyDescriptor>), Error> {
    use rocksdb_ffi::bridge::FamilyOptions;
    register();
    let mut families: Vec<FamilyOptions> = Vec::with_capacity(column_families.len() + 1);
    let default = column_families
        .iter()
        .find(|(name, _)| *name == rocksdb::DEFAULT_COLUMN_FAMILY_NAME)
        .map_or("", |(_, options)| options);
    families.push(FamilyOptions {
        name: rocksdb::DEFAULT_COLUMN_FAMILY_NAME.to_string(),
        options: default.to_string(),
    });
    for (i, (name, options)) in column_families.iter().enumerate() {
        if column_families[..i].iter().any(|(earlier, _)| earlier == name) {
            return Err(Error(format!("the column family {name:?} is named twice")));
        }
        if *name != rocksdb::DEFAULT_COLUMN_FAMILY_NAME {
            families.push(FamilyOptions {
                name: name.to_string(),
                options: options.to_string(),
            });
        }
    }
    let dir = tempfile::Builder::new()
        .prefix("rocks-bridge-options-")
        .tempdir()
        .map_err(|e| {
            Error(format!(
                "cannot create a temporary directory for the OPTIONS file: {e}"
            ))
        })?;
    // Options::load_latest reads the newest OPTIONS-<number> file.
    let file = dir.path().join("OPTIONS-000001");
    let file_name = file.to_str().ok_or_else(|| {
        Error(format!(
            "the temporary directory {} is not valid UTF-8; set TMPDIR to a UTF-8 path",
            dir.path().display()
        ))
    })?;
    rocksdb_ffi::bridge::persist_options(file_name, db_options, &families)
        .map_err(|e| Error(format!("RocksDB refused the options: {}", e.what())))?;
    let env = Env::new().map_err(|e| Error(format!("RocksDB's default Env: {e}")))?;
    let loaded = Options::load_latest(dir.path(), env, false, cache.clone())
        .map_err(|e| Error(format!("RocksDB cannot load the OPTIONS file it wrote: {e}")))?;
    dir.close().map_err(|e| {
        Error(format!(
            "cannot remove the temporary directory of the OPTIONS file: {e}"
        ))
    })?;
    Ok(loaded)
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
