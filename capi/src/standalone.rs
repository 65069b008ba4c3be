//! Standalone, Balanced and sharded Ribbon filters (this workspace's own
//! file formats, `ribbon::standalone`): build, serialise, open bytes or a
//! memory-mapped file without copying, query.

use crate::guard::{self, guard, put_opt, Failure, Keys, Result};
use crate::guard::{RIBBON_ERR_ARGUMENT, RIBBON_ERR_BUILD, RIBBON_ERR_CORRUPT, RIBBON_ERR_IO};
use rocks_ribbon::core::hash::get_slice_hash64;
use rocks_ribbon::standalone::sharded::{self, ShardedRef};
use rocks_ribbon::standalone::{Config, Error, Mode, Ribbon, RibbonRef};
use std::ffi::{c_char, c_int};
use std::path::Path;

/// How to build a standalone filter. Start from
/// [`ribbon_standalone_config_default`] and change what you need; flags
/// are 0 (off) or nonzero (on).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RibbonStandaloneConfig {
    /// Ribbon width in bits: 32, 64 or 128 (default 128).
    pub width: u32,
    /// Result bits per slot, 1.0 to 32.0, fractional allowed (default
    /// 7.0: an FP rate of 2^-7). Ignored when `fp_rate` is above 0.
    pub result_bits: f64,
    /// A target FP rate in 2^-32 to 0.5 instead of `result_bits`; 0 to use
    /// `result_bits` (default 0).
    pub fp_rate: f64,
    /// Homogeneous Ribbon (never fails to build; a little more space) instead
    /// of Standard Ribbon (default 0).
    pub homogeneous: u8,
    /// Balanced Ribbon (under 1 % space overhead at width 64; Standard
    /// Ribbon only, no smash) (default 0).
    pub balanced: u8,
    /// Smash: better for small sets, below about 10 000 keys (default 0).
    pub smash: u8,
    /// The first seed tried (default 0).
    pub seed: u32,
}

impl RibbonStandaloneConfig {
    /// The configuration `*config` asks for; NULL: the default.
    ///
    /// # Safety
    /// `config` NULL or readable.
    unsafe fn read(config: *const Self) -> Result<Config> {
        if config.is_null() {
            return Ok(Config::default());
        }
        // SAFETY: not NULL; the caller vouches that it is readable.
        unsafe { config.read() }.to_config()
    }

    fn to_config(self) -> Result<Config> {
        let base = Config {
            width: self.width,
            mode: if self.homogeneous != 0 {
                Mode::Homogeneous
            } else {
                Mode::Standard
            },
            smash: self.smash != 0,
            balanced: self.balanced != 0,
            seed: self.seed,
            ..Config::default()
        };
        let config = if self.fp_rate > 0.0 {
            base.with_fp_rate(self.fp_rate)
        } else {
            base.with_result_bits(self.result_bits)
        };
        config
            .validate()
            .map_err(|e| Failure::new(RIBBON_ERR_ARGUMENT, e.to_string()))?;
        Ok(config)
    }
}

/// Writes the default configuration (Standard Ribbon, width 128, 7 result
/// bits) into `*out`.
///
/// # Safety
/// `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_config_default(out: *mut RibbonStandaloneConfig) -> c_int {
    guard(|| {
        let d = Config::default();
        let config = RibbonStandaloneConfig {
            width: d.width,
            result_bits: 7.0,
            fp_rate: 0.0,
            homogeneous: 0,
            balanced: 0,
            smash: 0,
            seed: d.seed,
        };
        // SAFETY: as the caller vouches.
        unsafe { guard::put(out, config, "the output configuration") }
    })
}

/// The name of a filter handle in errors.
const FILTER: &str = "the filter handle";

fn standalone_failure(e: &Error) -> Failure {
    let code = match e {
        Error::InvalidConfig { .. } => RIBBON_ERR_ARGUMENT,
        Error::TooManyKeys { .. } | Error::ConstructionFailed { .. } => RIBBON_ERR_BUILD,
        _ => RIBBON_ERR_CORRUPT,
    };
    Failure::new(code, e.to_string())
}

fn sharded_failure(e: &sharded::Error) -> Failure {
    let code = match e {
        sharded::Error::InvalidShards(_) => RIBBON_ERR_ARGUMENT,
        sharded::Error::Shard { error, .. } => standalone_failure(error).code,
        sharded::Error::HashNotInShard { .. } => RIBBON_ERR_BUILD,
        _ => RIBBON_ERR_CORRUPT,
    };
    Failure::new(code, e.to_string())
}

/// Where a filter's bytes live: a heap copy or a read-only memory map.
/// Either way the bytes stay at one address until dropped.
enum Storage {
    Owned(#[allow(dead_code)] Box<[u8]>),
    Mapped(#[allow(dead_code)] memmap2::Mmap),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Owned(b) => b,
            Storage::Mapped(m) => m,
        }
    }

    /// Maps the regular file at `path` read-only (anything else, a FIFO
    /// included, is refused at once).
    fn map(path: &Path) -> Result<Storage> {
        let io = |e: std::io::Error| Failure::new(RIBBON_ERR_IO, format!("{}: {e}", path.display()));
        // Only a regular file, and an open that never blocks (a FIFO):
        // the rule's one owner, shared with `ribbon_sst_open`.
        let (file, meta) = ribbon_sst::fs::open_regular(path).map_err(io)?;
        if meta.len() == 0 {
            return Ok(Storage::Owned(Box::default()));
        }
        // SAFETY: the mapping is read-only and private to this handle; the
        // documented contract of the open functions is that the file is not
        // modified or truncated while the handle is open (as for any mmap).
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Ok(Storage::Mapped(map))
    }

    /// A handle over these bytes made by `new`; its failure names `path`.
    fn open<T>(self, new: fn(Storage) -> Result<T>, path: &Path) -> Result<T> {
        new(self).map_err(|f| f.at(path.display()))
    }

    /// The bytes, for the life of the view that borrows them.
    ///
    /// # Safety
    /// The returned slice must not outlive `self`: the handle that holds
    /// both drops the view first (field order) and never hands it out.
    unsafe fn bytes_static(&self) -> &'static [u8] {
        let b = self.bytes();
        // SAFETY: a `Box<[u8]>`'s or an `Mmap`'s bytes stay at one address,
        // unchanged, until it is dropped (moving the box or map moves only
        // the pointer); the caller keeps the slice no longer than `self`.
        unsafe { std::slice::from_raw_parts(b.as_ptr(), b.len()) }
    }
}

/// A standalone or Balanced Ribbon filter (opaque), borrowed zero-copy
/// from its own copy of the bytes or from a memory-mapped file.
/// Immutable: queries from many threads at once are safe.
pub struct RibbonStandalone {
    // Declared first, so dropped before the bytes it borrows.
    view: RibbonRef<'static>,
    _storage: Storage,
}

impl RibbonStandalone {
    fn new(storage: Storage) -> Result<Self> {
        // SAFETY: the view is stored next to its storage and dropped first.
        let bytes = unsafe { storage.bytes_static() };
        let view = RibbonRef::from_bytes(bytes).map_err(|e| standalone_failure(&e))?;
        Ok(RibbonStandalone {
            view,
            _storage: storage,
        })
    }
}

/// Builds a standalone filter of `n` keys under `*config` (NULL: the
/// default) into `*out` (close with [`ribbon_standalone_close`]). Every key
/// then answers "may match". Errors: [`crate::RIBBON_ERR_ARGUMENT`] for an
/// invalid configuration, [`crate::RIBBON_ERR_BUILD`] when construction
/// fails (too many keys, no seed worked).
///
/// # Safety
/// `config` NULL or readable; the key arrays as in
/// [`crate::sst::ribbon_sst_may_match_many`]; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_build(
    config: *const RibbonStandaloneConfig,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut *mut RibbonStandalone,
) -> c_int {
    let make = || {
        // SAFETY: as the caller vouches.
        let config = unsafe { RibbonStandaloneConfig::read(config)? };
        // SAFETY: as the caller vouches.
        let hashes = unsafe { Keys::new(keys, key_lens, n)? }.hashes()?;
        let filter = Ribbon::from_hash_vec(hashes, &config).map_err(|e| standalone_failure(&e))?;
        RibbonStandalone::new(Storage::Owned(filter.into_bytes().into_boxed_slice()))
    };
    // SAFETY: as the caller vouches.
    unsafe { guard::make_handle(out, make) }
}

/// Opens a standalone filter from `len` bytes (copied and verified:
/// header, checksums) into `*out`. [`crate::RIBBON_ERR_CORRUPT`] for bytes
/// that are not a valid filter.
///
/// # Safety
/// `data` NULL (with `len == 0`) or `len` readable bytes; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_open_bytes(
    data: *const u8,
    len: usize,
    out: *mut *mut RibbonStandalone,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::open_bytes(data, len, "the filter bytes", out, |data| {
            RibbonStandalone::new(Storage::Owned(guard::copy_bytes(data, "the filter bytes")?))
        })
    }
}

/// Opens the standalone filter file at `path` zero-copy: the file is
/// memory-mapped read-only and verified once (header, checksums); queries
/// read the mapping. The file must not be modified or truncated while the
/// handle is open. Errors: [`crate::RIBBON_ERR_IO`],
/// [`crate::RIBBON_ERR_CORRUPT`].
///
/// # Safety
/// `path` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_open_path(
    path: *const c_char,
    out: *mut *mut RibbonStandalone,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::open_path(path, out, |path| {
            Storage::map(path)?.open(RibbonStandalone::new, path)
        })
    }
}

/// Closes a standalone filter handle (and unmaps its file). NULL is a
/// no-op.
///
/// # Safety
/// `filter` NULL or a live handle, not closed before, used by no other
/// thread.
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_close(filter: *mut RibbonStandalone) {
    // SAFETY: as the caller vouches.
    unsafe { guard::take(filter) }
}

/// The filter's bytes in its file format (a copy into `*out`, `*out_len`,
/// freed with [`crate::ribbon_bytes_free`]): write them to a file and open
/// it later with [`ribbon_standalone_open_path`].
///
/// # Safety
/// `filter` NULL or live; `out`, `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_serialize(
    filter: *const RibbonStandalone,
    out: *mut *mut u8,
    out_len: *mut usize,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe { guard::bytes_of(filter, FILTER, out, out_len, |h| Ok(h.view.as_bytes().to_vec())) }
}

/// Whether `key` may be in the set (`*out` = 1) or is definitely not (0).
///
/// # Safety
/// `filter` NULL or live; `key` NULL (with `key_len == 0`) or `key_len`
/// bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_contains(
    filter: *const RibbonStandalone,
    key: *const u8,
    key_len: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_key(filter, FILTER, key, key_len, out, |h, key| {
            Ok(h.view.contains(key))
        })
    }
}

/// [`ribbon_standalone_contains`] for `n` keys, answers into `out[i]`.
///
/// # Safety
/// As [`crate::sst::ribbon_sst_may_match_many`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_contains_many(
    filter: *const RibbonStandalone,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_keys(filter, FILTER, keys, key_lens, n, out, |h, keys, out| {
            h.view.contains_many_hashes_into(&keys.hashes()?, out);
            Ok(())
        })
    }
}

/// The filter's key count, bits per key and expected FP rate. Any
/// out-parameter may be NULL (not wanted).
///
/// # Safety
/// `filter` NULL or live; each out-parameter NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_standalone_stats(
    filter: *const RibbonStandalone,
    num_keys: *mut u64,
    bits_per_key: *mut f64,
    expected_fp_rate: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let filter = unsafe { guard::handle(filter, FILTER)? };
        let v = &filter.view;
        // SAFETY: each is NULL (skipped) or writable, as the caller vouches.
        unsafe {
            put_opt(num_keys, v.num_keys());
            put_opt(bits_per_key, v.bits_per_key());
            put_opt(expected_fp_rate, v.expected_fp_rate());
        }
        Ok(())
    })
}

/// A sharded filter container (opaque), borrowed zero-copy from its own
/// copy of the bytes or from a memory-mapped file. Shard bodies are
/// verified the first time a query uses them; a damaged shard answers
/// "may match" for its keys (never a false negative). Queries from many
/// threads at once are safe.
pub struct RibbonSharded {
    // Declared first, so dropped before the bytes it borrows.
    view: ShardedRef<'static>,
    _storage: Storage,
}

impl RibbonSharded {
    fn new(storage: Storage) -> Result<Self> {
        // SAFETY: the view is stored next to its storage and dropped first.
        let bytes = unsafe { storage.bytes_static() };
        let view = ShardedRef::from_bytes(bytes).map_err(|e| sharded_failure(&e))?;
        Ok(RibbonSharded {
            view,
            _storage: storage,
        })
    }
}

/// Builds a sharded container of `2^shard_bits` shards (`shard_bits` up
/// to 20), each a standalone filter under `*config` (NULL: the default) of
/// the keys whose hash falls in it; the container's bytes go to `*out`,
/// `*out_len` (free with [`crate::ribbon_bytes_free`]). Open them with
/// [`ribbon_sharded_open_bytes`], or write them to a file and open it with
/// [`ribbon_sharded_open_path`].
///
/// # Safety
/// As [`ribbon_standalone_build`]; `out`, `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sharded_build(
    config: *const RibbonStandaloneConfig,
    shard_bits: u32,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut *mut u8,
    out_len: *mut usize,
) -> c_int {
    let make = || {
        // SAFETY: as the caller vouches.
        let config = unsafe { RibbonStandaloneConfig::read(config)? };
        if shard_bits > sharded::MAX_SHARD_BITS {
            return Err(Failure::argument(format!(
                "shard_bits {shard_bits}: at most {}",
                sharded::MAX_SHARD_BITS
            )));
        }
        // SAFETY: as the caller vouches.
        let keys = unsafe { Keys::new(keys, key_lens, n)? };
        // Each shard's hashes in a buffer of its exact size, allocated
        // fallibly (a batch too large is RIBBON_ERR_MEMORY).
        let mut counts = vec![0usize; 1usize << shard_bits];
        for i in 0..keys.len() {
            counts[sharded::shard_of(get_slice_hash64(keys.get(i)?), shard_bits)] += 1;
        }
        let mut by_shard: Vec<Vec<u64>> = Vec::with_capacity(counts.len());
        for &c in &counts {
            by_shard.push(guard::with_room(c, "a shard's key hashes")?);
        }
        for i in 0..keys.len() {
            let h = get_slice_hash64(keys.get(i)?);
            by_shard[sharded::shard_of(h, shard_bits)].push(h);
        }
        let files = by_shard
            .iter()
            .enumerate()
            .map(|(i, hs)| sharded::build_shard_file(hs, i, shard_bits, &config))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| sharded_failure(&e))?;
        let refs: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
        sharded::assemble(shard_bits, &refs).map_err(|e| sharded_failure(&e))
    };
    // SAFETY: as the caller vouches.
    unsafe { guard::make_bytes(out, out_len, make) }
}

/// Opens a sharded container from `len` bytes (copied) into `*out`.
///
/// # Safety
/// As [`ribbon_standalone_open_bytes`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_sharded_open_bytes(
    data: *const u8,
    len: usize,
    out: *mut *mut RibbonSharded,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::open_bytes(data, len, "the container bytes", out, |data| {
            RibbonSharded::new(Storage::Owned(guard::copy_bytes(data, "the container bytes")?))
        })
    }
}

/// Opens the sharded container file at `path` zero-copy (memory-mapped
/// read-only; header and index checked now, each shard on first use). The
/// file must not be modified or truncated while the handle is open.
///
/// # Safety
/// As [`ribbon_standalone_open_path`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_sharded_open_path(
    path: *const c_char,
    out: *mut *mut RibbonSharded,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::open_path(path, out, |path| {
            Storage::map(path)?.open(RibbonSharded::new, path)
        })
    }
}

/// Closes a sharded handle (and unmaps its file). NULL is a no-op.
///
/// # Safety
/// As [`ribbon_standalone_close`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_sharded_close(filter: *mut RibbonSharded) {
    // SAFETY: as the caller vouches.
    unsafe { guard::take(filter) }
}

/// Whether `key` may be in the set (`*out` = 1) or is definitely not (0).
/// A key of a damaged shard is [`crate::RIBBON_ERR_CORRUPT`] (checked the
/// first time its shard is used), never a wrong answer.
///
/// # Safety
/// As [`ribbon_standalone_contains`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_sharded_contains(
    filter: *const RibbonSharded,
    key: *const u8,
    key_len: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_key(filter, FILTER, key, key_len, out, |h, key| {
            h.view.try_contains(key).map_err(|e| sharded_failure(&e))
        })
    }
}

/// [`ribbon_sharded_contains`] for `n` keys, answers into `out[i]`; a key
/// of a damaged shard fails the call with [`crate::RIBBON_ERR_CORRUPT`].
///
/// # Safety
/// As [`crate::sst::ribbon_sst_may_match_many`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_sharded_contains_many(
    filter: *const RibbonSharded,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_keys(filter, FILTER, keys, key_lens, n, out, |h, keys, out| {
            for (i, o) in out.iter_mut().enumerate() {
                *o = h
                    .view
                    .try_contains_hash(get_slice_hash64(keys.get(i)?))
                    .map_err(|e| sharded_failure(&e))?;
            }
            Ok(())
        })
    }
}

/// The container's key count and shard count. Either out-parameter may be
/// NULL.
///
/// # Safety
/// `filter` NULL or live; each out-parameter NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_sharded_stats(
    filter: *const RibbonSharded,
    num_keys: *mut u64,
    num_shards: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: as the caller vouches.
        let filter = unsafe { guard::handle(filter, FILTER)? };
        // SAFETY: each is NULL (skipped) or writable, as the caller vouches.
        unsafe {
            put_opt(num_keys, filter.view.num_keys());
            put_opt(num_shards, filter.view.num_shards() as u64);
        }
        Ok(())
    })
}
