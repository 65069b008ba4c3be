//! RocksDB-format filters: the filter block bytes RocksDB writes into an
//! SST file, built from a policy string and keys, and read back.

use crate::guard::{self, Failure, Keys};
use crate::guard::{RIBBON_ERR_ARGUMENT, RIBBON_ERR_CORRUPT, RIBBON_ERR_UNSUPPORTED};
use rocks_ribbon::{BuildContext, FilterBuilder, FilterPolicy, FilterReader};
use std::ffi::{c_char, c_int};

/// The name of a filter handle in errors.
const FILTER: &str = "the filter handle";

/// A RocksDB-format filter (opaque), holding a copy of its bytes.
/// Immutable: queries from many threads at once are safe.
pub struct RibbonFilter {
    bytes: Box<[u8]>,
}

impl RibbonFilter {
    /// The reader RocksDB makes for these bytes (reading the trailer only).
    fn reader(&self) -> FilterReader<'_> {
        FilterReader::new(&self.bytes)
    }
}

/// Builds the filter block RocksDB 11.8 writes for `n` keys under
/// `policy` (a policy id as RocksDB's options strings name them:
/// `ribbonfilter:10`, `bloomfilter:10:false`, `rust.RibbonFilter:10`, ...)
/// in a table of `format_version` (0 to 7, as RocksDB 11.8 accepts: 0 and
/// 1 write as 2; 7 is RocksDB 11.8's default),
/// as SstFileWriter builds it (level -1). The bytes go to `*out`,
/// `*out_len` (free with [`crate::ribbon_bytes_free`]); they equal
/// RocksDB's byte for byte. Errors: [`crate::RIBBON_ERR_ARGUMENT`] for a
/// policy that does not parse or a format_version outside 0 to 7,
/// [`crate::RIBBON_ERR_UNSUPPORTED`] for a policy that builds no filter
/// there.
///
/// # Safety
/// `policy` is NULL or NUL-terminated; the key arrays as in
/// [`crate::sst::ribbon_sst_may_match_many`]; `out`, `out_len` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_filter_build(
    policy: *const c_char,
    format_version: c_int,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut *mut u8,
    out_len: *mut usize,
) -> c_int {
    let make = || {
        // SAFETY: as the caller vouches.
        let policy_str = unsafe { guard::utf8(policy, "the policy")? };
        // SAFETY: as the caller vouches.
        let keys = unsafe { Keys::new(keys, key_lens, n)? };
        let policy: FilterPolicy = policy_str
            .parse()
            .map_err(|e| Failure::new(RIBBON_ERR_ARGUMENT, format!("{e}")))?;
        let format_version = rocks_ribbon::check_format_version(format_version.into())
            .map_err(|e| Failure::argument(e.to_string()))?;
        let ctx = BuildContext::sst_file_writer(format_version);
        let mut builder = FilterBuilder::new(&policy, &ctx).ok_or_else(|| {
            Failure::new(
                RIBBON_ERR_UNSUPPORTED,
                format!("policy {policy_str} builds no filter at format_version {format_version}"),
            )
        })?;
        // The builder's hash per key, allocated fallibly up front.
        builder
            .try_reserve(keys.len())
            .map_err(|_| Failure::memory("the key hashes", keys.len()))?;
        for i in 0..keys.len() {
            builder.add_key(keys.get(i)?);
        }
        Ok(builder.finish())
    };
    // SAFETY: as the caller vouches.
    unsafe { guard::make_bytes(out, out_len, make) }
}

/// Opens `len` bytes of a RocksDB filter block (copied) into `*out`. The
/// bytes must be a filter RocksDB writes (FastLocalBloom, legacy Bloom,
/// Standard128 Ribbon, or the always-true filter) with a consistent
/// trailer: anything else is [`crate::RIBBON_ERR_CORRUPT`], so that a
/// truncated or foreign buffer never silently answers every query alike.
/// Close with [`ribbon_filter_close`].
///
/// # Safety
/// `data` is NULL (with `len == 0`) or `len` readable bytes; `out` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_filter_open(
    data: *const u8,
    len: usize,
    out: *mut *mut RibbonFilter,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::open_bytes(data, len, "the filter bytes", out, |data| {
            FilterReader::parse(data)
                .map_err(|e| Failure::new(RIBBON_ERR_CORRUPT, format!("not a RocksDB filter: {e}")))?;
            Ok(RibbonFilter {
                bytes: guard::copy_bytes(data, "the filter bytes")?,
            })
        })
    }
}

/// Closes a filter handle. NULL is a no-op.
///
/// # Safety
/// `filter` is NULL or a handle from [`ribbon_filter_open`], not closed
/// before, and no other thread uses it.
#[no_mangle]
pub unsafe extern "C" fn ribbon_filter_close(filter: *mut RibbonFilter) {
    // SAFETY: as the caller vouches.
    unsafe { guard::take(filter) }
}

/// Whether `key` may be in the set the filter was built from (`*out` = 1)
/// or is definitely not (0), as RocksDB's reader answers.
///
/// # Safety
/// `filter` NULL or live; `key` NULL (with `key_len == 0`) or `key_len`
/// bytes; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_filter_may_match(
    filter: *const RibbonFilter,
    key: *const u8,
    key_len: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_key(filter, FILTER, key, key_len, out, |h, key| {
            Ok(h.reader().may_match(key))
        })
    }
}

/// [`ribbon_filter_may_match`] for `n` keys, answers into `out[i]`
/// (RocksDB's MultiGet batch: hashes first, probes overlapped).
///
/// # Safety
/// As [`crate::sst::ribbon_sst_may_match_many`].
#[no_mangle]
pub unsafe extern "C" fn ribbon_filter_may_match_many(
    filter: *const RibbonFilter,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut u8,
) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe {
        guard::answer_keys(filter, FILTER, keys, key_lens, n, out, |h, keys, out| {
            let reader = h.reader();
            if reader.takes_hash64() {
                reader.may_match_many_hashes_into(&keys.hashes()?, out);
            } else {
                reader.may_match_many_into(&keys.to_vec()?, out);
            }
            Ok(())
        })
    }
}

/// A one-line description of the filter (its kind and parameters, as
/// `ribbon info` prints it) into `*out`, freed with
/// [`crate::ribbon_string_free`].
///
/// # Safety
/// `filter` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_filter_describe(filter: *const RibbonFilter, out: *mut *mut c_char) -> c_int {
    // SAFETY: as the caller vouches.
    unsafe { guard::string_of(filter, FILTER, out, |h| Ok(h.reader().describe().to_string())) }
}
