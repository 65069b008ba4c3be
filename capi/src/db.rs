//! Database directories: which files RocksDB's `Get` asks for each key,
//! and what each answers (the `ribbon db query --json` report).

use crate::guard::{self, Failure, Keys};
use crate::guard::{RIBBON_ERR_ARGUMENT, RIBBON_ERR_CORRUPT, RIBBON_ERR_IO, RIBBON_ERR_UNSUPPORTED};
use ribbon_sst::db::get::FileCache;
use ribbon_sst::db::{Db, DbError, FileLabels, GetPathReport};
use std::ffi::{c_char, c_int};
use std::sync::Mutex;

/// An open database directory (opaque): one column family's live files
/// from its MANIFEST, and its unflushed writes replayed from the WALs, as
/// RocksDB 11.8 recovers them. SST files are opened on first use and kept
/// open (at most 256). Safe to share between threads (queries take turns),
/// and usable in a child process forked while another thread was querying
/// it (the child opens the files it needs for each call instead of
/// waiting on a lock no thread of the child will release).
pub struct RibbonDb {
    db: Db,
    /// The live files' levels and names, for the JSON reports.
    labels: FileLabels,
    cache: Mutex<FileCache>,
    /// The process that opened it: a child forked later never takes the
    /// cache's lock, which a thread of the parent may have held at the
    /// fork (it would never be released in the child).
    pid: u32,
}

fn db_failure(e: &DbError) -> Failure {
    let code = match e {
        DbError::Io { .. } => RIBBON_ERR_IO,
        DbError::Unsupported { .. } => RIBBON_ERR_UNSUPPORTED,
        DbError::Argument { .. } => RIBBON_ERR_ARGUMENT,
        DbError::Sst { error, .. } => crate::sst::sst_failure(error).code,
        _ => RIBBON_ERR_CORRUPT,
    };
    Failure::new(code, e.to_string())
}

/// Opens column family `column_family` (NULL: `"default"`) of the
/// database directory `path` into `*out` (close with [`ribbon_db_close`]).
/// The database may be open in RocksDB at the same time (a file a
/// compaction deletes under the reader is an error naming it; run again).
/// [`crate::RIBBON_ERR_ARGUMENT`] when the database has no column family of
/// that name (the message lists those it has).
///
/// # Safety
/// `path` NULL or NUL-terminated; `column_family` NULL or NUL-terminated;
/// `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_db_open(
    path: *const c_char,
    column_family: *const c_char,
    out: *mut *mut RibbonDb,
) -> c_int {
    let open = |path: &std::path::Path| {
        let cf = if column_family.is_null() {
            "default"
        } else {
            // SAFETY: not NULL; the caller vouches for the string.
            unsafe { guard::utf8(column_family, "the column family")? }
        };
        let db = Db::open_column_family(path, cf).map_err(|e| db_failure(&e).at(path.display()))?;
        Ok(RibbonDb {
            labels: FileLabels::of(&db),
            db,
            cache: Mutex::new(FileCache::new()),
            pid: std::process::id(),
        })
    };
    // SAFETY: as the caller vouches.
    unsafe { guard::open_path(path, out, open) }
}

/// Closes a database handle and the files it keeps open. NULL is a no-op.
///
/// # Safety
/// `db` NULL or a live handle, not closed before, used by no other thread.
#[no_mangle]
pub unsafe extern "C" fn ribbon_db_close(db: *mut RibbonDb) {
    // SAFETY: as the caller vouches.
    unsafe { guard::take(db) }
}

/// The `Get` path of each of `n` keys, as a JSON array into `*out` (freed
/// with [`crate::ribbon_string_free`]), one object per key in order, the
/// shape of `ribbon db query --json` without the key:
/// `{"memtable": "none"|"value"|"deleted"|"merge"|"range-deleted",
/// "found": bool, "files": [{"level": 1, "file": "000012.sst",
/// "may_match": bool, "answer": "filtered"|"absent"|"value"|"deleted"|"merge",
/// "range_deleted": bool}, ...]}`. `files` lists every file the `Get`
/// asks, in order, up to the one where it stops; `may_match` is what the
/// file's filter answered (RocksDB's `bloom.filter.useful` counts the
/// `false`s).
///
/// # Safety
/// `db` NULL or live; the key arrays as in
/// [`crate::sst::ribbon_sst_may_match_many`]; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ribbon_db_get_paths_json(
    db: *const RibbonDb,
    keys: *const *const u8,
    key_lens: *const usize,
    n: usize,
    out: *mut *mut c_char,
) -> c_int {
    let json = |db: &RibbonDb| {
        // SAFETY: as the caller vouches.
        let keys = unsafe { Keys::new(keys, key_lens, n)? };
        // A panic while the lock was held left the cache as it was
        // between two files: still a valid cache. In a forked child, files
        // of its own for this call.
        let mut own = FileCache::new();
        let mut locked;
        let cache: &mut FileCache = if std::process::id() == db.pid {
            locked = db.cache.lock().unwrap_or_else(|p| p.into_inner());
            &mut locked
        } else {
            &mut own
        };
        // Chunk by chunk, so that the reader's buffers (one Get path per
        // key) stay small whatever the batch's size; the text grows
        // fallibly (a batch too large is RIBBON_ERR_MEMORY).
        let mut text = String::from("[");
        for from in (0..keys.len()).step_by(guard::CHUNK_KEYS) {
            let to = keys.len().min(from + guard::CHUNK_KEYS);
            let slices = keys.range(from, to).to_vec()?;
            let paths = db.db.get_paths(&slices, cache).map_err(|e| db_failure(&e))?;
            for p in &paths {
                let report: GetPathReport = p.report(None, &db.labels);
                let one = serde_json::to_string(&report)
                    .map_err(|e| Failure::new(RIBBON_ERR_UNSUPPORTED, format!("Get paths as JSON: {e}")))?;
                text.try_reserve(one.len() + 2)
                    .map_err(|_| Failure::memory("the JSON report", keys.len()))?;
                if text.len() > 1 {
                    text.push(',');
                }
                text.push_str(&one);
            }
        }
        text.push(']');
        Ok(text)
    };
    // SAFETY: as the caller vouches.
    unsafe { guard::string_of(db, "the database handle", out, json) }
}

/// Calls `f` with each live key of `db` (for the reconciliation sketches).
pub(crate) fn for_each_live_key(db: &RibbonDb, f: impl FnMut(&[u8])) -> crate::guard::Result<()> {
    db.db.for_each_live_key(f).map(|_| ()).map_err(|e| db_failure(&e))
}
