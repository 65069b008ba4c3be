//! Reading a whole RocksDB database directory without RocksDB: which SST
//! files are live and at which level (the MANIFEST), the writes not yet
//! flushed (the WAL), the database's live keys (every source merged,
//! deletions applied), and the files a `Get` of a key would ask.
//!
//! ```no_run
//! let db = ribbon_sst::db::Db::open("/path/to/db")?;
//! db.for_each_live_key(|key| println!("{}", String::from_utf8_lossy(key)))?;
//! for step in db.get_path(b"user42") {
//!     println!("L{} {}", step.level, step.name());
//! }
//! # Ok::<(), ribbon_sst::db::DbError>(())
//! ```
//!
//! **Contracts.** [`Db::open`] reads `CURRENT`, the MANIFEST it names, the
//! newest OPTIONS file (`wal_dir`, `wal_recovery_mode`, `num_levels`), and
//! every WAL at or above the column family's log number in the WAL
//! directory (the OPTIONS file's `wal_dir`, or [`OpenOptions::wal_dir`]; a
//! WAL directory that does not exist is an error naming it). The writes
//! not yet flushed are replayed as RocksDB's `wal_recovery_mode` says
//! (default point-in-time: up to the first corrupt record, and no later
//! WAL; [`Db::recovery`] says which mode was applied and where it
//! stopped). It opens no SST file. [`Db::for_each_live_key`] reports each
//! user key whose newest entry (memtable, then L0 newest first, then each
//! level) is not a deletion and is not covered by a newer range deletion
//! (`DeleteRange`, from the WAL or any SST file), exactly once, in
//! comparator order. [`Db::get_paths`] lists the files a `Get` asks, in
//! RocksDB's `FilePicker` order, up to where it stops. User-defined
//! timestamps and comparators this crate cannot reproduce are refused
//! rather than answered wrong. Files in `db_paths` other than the DB
//! directory are found through [`OpenOptions::db_paths`] (RocksDB does not
//! record those paths); without them such a file is an error naming it.
//!
//! **Checks against the files.** An SST file is opened only if it is a
//! regular file, its size is the MANIFEST's, and its comparator is the
//! column family's (RocksDB refuses the same). A file the MANIFEST lists
//! that has gone is reported in one line, saying whether a newer MANIFEST
//! dropped it (the database was being written: read it again, or read a
//! checkpoint). `CURRENT`, MANIFEST, OPTIONS and WAL files that are not
//! regular files (a FIFO, a device) are refused before they are opened.
//!
//! **Hostile input and budgets.** MANIFEST and WAL files are read whole
//! (memory linear in their size, at most [`MAX_LOG_FILE`] bytes each) and
//! every record is bounds-checked and checksummed; a MANIFEST may list at
//! most [`MAX_LEVEL0_FILES`] L0 files (the live-key walk holds one open
//! source per L0 file, sharing [`merge::READAHEAD_BUDGET`] of read-ahead:
//! 1,000 L0 entries linking one 24 KB table peak at 58 MB resident, the
//! test `a_thousand_l0_entries_linking_one_sst_read_within_the_bound`) and at most
//! [`MAX_LIVE_FILES`] files in all; levels at or above the column family's
//! `num_levels` are refused. SST files are read through [`crate::SstFile`]
//! with its budgets, one data block per source at a time ([`merge`]).
//! Errors are one line ([`DbError`]), never a panic.
//!
//! **Blob files.** A `Get` that ends at a blob index ([`blob`]) checks,
//! as RocksDB's `Version::GetBlob` would fail, that the MANIFEST lists its
//! blob file and that the file is there (in the first of
//! [`OpenOptions::db_paths`], else the DB directory); the blob is not
//! read.

pub mod blob;
mod blocks;
mod data_keys;
pub mod error;
pub mod get;
pub mod log;
pub mod manifest;
pub mod merge;
pub mod options;
pub mod range_del;
pub mod report;
pub mod wal;

pub use error::DbError;
pub use get::{Detail, FileAnswer, GetPath, MemtableAnswer, Step};
pub use manifest::{ColumnFamily, FileMeta, Version};
pub use merge::for_each_file_key;
pub use options::{OpenOptions, OptionsFile, WalRecoveryMode};
pub use range_del::{Tombstone, Tombstones};
pub use report::{FileLabels, GetPathReport, StepReport};
pub use wal::{EntryKind, MemEntry, Memtable};

use crate::table::SstFile;

use crate::key::{self, Comparator, UserComparator};
use core::cmp::Ordering;
use std::path::{Path, PathBuf};

/// A live SST file of the column family read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    /// Its level.
    pub level: u32,
    /// Its MANIFEST record.
    pub meta: FileMeta,
    /// Where it is.
    pub path: PathBuf,
}

impl LiveFile {
    /// Its file name (`000012.sst`).
    pub fn name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// Its smallest user key.
    pub fn smallest_user_key(&self) -> &[u8] {
        key::split_internal(&self.meta.smallest).0
    }

    /// Its largest user key.
    pub fn largest_user_key(&self) -> &[u8] {
        key::split_internal(&self.meta.largest).0
    }

    fn covers(&self, user_key: &[u8], c: Comparator) -> bool {
        compare_user(c, self.smallest_user_key(), user_key) != Some(Ordering::Greater)
            && compare_user(c, user_key, self.largest_user_key()) != Some(Ordering::Greater)
    }
}

/// `c.compare_user(a, b)`, the bytewise comparisons inline (the keys
/// compared are short: a library call costs more than the comparison).
#[inline]
pub(crate) fn compare_user(c: Comparator, a: &[u8], b: &[u8]) -> Option<Ordering> {
    match (c.user, c.timestamp_size) {
        (UserComparator::Bytewise, 0) => Some(data_keys::bytewise(a, b)),
        (UserComparator::ReverseBytewise, 0) => Some(data_keys::bytewise(b, a)),
        _ => c.compare_user(a, b),
    }
}

/// The most bytes of a MANIFEST or WAL file read (each is read whole).
pub const MAX_LOG_FILE: u64 = 1 << 30;

/// The most L0 files a MANIFEST may list (RocksDB stops writes at 36 by
/// default; the live-key walk holds one source per L0 file).
pub const MAX_LEVEL0_FILES: usize = 1000;

/// The most live files of one column family.
pub const MAX_LIVE_FILES: usize = 1_000_000;

/// The number of levels when the OPTIONS file does not say (RocksDB's
/// default `num_levels`).
pub const DEFAULT_NUM_LEVELS: u32 = 7;

/// How the WALs were replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The mode applied (the OPTIONS file's `wal_recovery_mode`).
    pub mode: WalRecoveryMode,
    /// The WAL directory read.
    pub wal_dir: PathBuf,
    /// Where replay stopped early: the WAL's number and why; later WALs
    /// were not replayed (point-in-time recovery).
    pub stopped_at: Option<(u64, String)>,
    /// WALs at or above the log number that were not replayed.
    pub skipped_wals: Vec<u64>,
}

/// Reads the file at `path` whole, refusing anything but a regular file
/// (a FIFO would block the reader) and files over `max` bytes.
pub fn read_regular_file(path: &Path, max: u64) -> Result<Vec<u8>, DbError> {
    // `crate::fs` owns the rule (a regular file, never a blocking open).
    crate::fs::read_regular(path, max).map_err(|e| {
        if crate::fs::is_not_regular(&e) {
            not_regular(path)
        } else if e.kind() == std::io::ErrorKind::InvalidData {
            DbError::unsupported(format!("{}: {e} (the reader's bound)", path.display()))
        } else {
            DbError::io(path, &e)
        }
    })
}

/// The size of the regular file at `path`; an error for anything else (a
/// FIFO, a device, a directory), without opening it.
pub fn check_regular_file(path: &Path) -> Result<u64, DbError> {
    let meta = std::fs::metadata(path).map_err(|e| DbError::io(path, &e))?;
    if !meta.is_file() {
        return Err(not_regular(path));
    }
    Ok(meta.len())
}

/// The refusal of a path that is not a regular file.
fn not_regular(path: &Path) -> DbError {
    DbError::unsupported(format!("{}: {}", path.display(), crate::fs::NOT_REGULAR))
}

/// A database directory, read as far as its live files and unflushed writes.
#[derive(Debug, Clone)]
pub struct Db {
    dir: PathBuf,
    version: Version,
    column_family: ColumnFamily,
    comparator: Comparator,
    /// L0 newest first, then each level's files in key order.
    levels: Vec<Vec<LiveFile>>,
    memtable: Memtable,
    options: OptionsFile,
    recovery: Recovery,
    /// Where the blob files are: the first of `db_paths` (or `cf_paths`)
    /// given, else the DB directory (RocksDB's `BlobFileName` of
    /// `cf_paths.front()`).
    blob_dir: PathBuf,
}

impl Db {
    /// The names of the column families of the database in `dir`, in the
    /// order of their ids (`default` first), as RocksDB's
    /// `DB::ListColumnFamilies` reads them from the MANIFEST.
    pub fn list_column_families(dir: impl AsRef<Path>) -> Result<Vec<String>, DbError> {
        let version = Version::read_manifest(&manifest::current_manifest(dir.as_ref())?)?;
        Ok(version.column_families.into_values().map(|c| c.name).collect())
    }

    /// Opens the default column family of the database in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, DbError> {
        Self::open_column_family(dir, "default")
    }

    /// Opens column family `name` of the database in `dir`.
    pub fn open_column_family(dir: impl AsRef<Path>, name: &str) -> Result<Self, DbError> {
        Self::open_with(dir, name, &OpenOptions::default())
    }

    /// Opens column family `name` of the database in `dir`, its files where
    /// `how` says.
    pub fn open_with(dir: impl AsRef<Path>, name: &str, how: &OpenOptions) -> Result<Self, DbError> {
        let dir = dir.as_ref();
        let meta = std::fs::metadata(dir).map_err(|e| DbError::io(dir, &e))?;
        if !meta.is_dir() {
            // The directory is not named: every caller names it (the CLI
            // and the C library put it before every error of opening).
            return Err(DbError::unsupported(
                "not a database directory (to read one SST file, use the SST reader: `ribbon sst`, `rocks_ribbon.SstFile`, `ribbon_sst_open`)",
            ));
        }
        let mut version = Version::read_manifest(&manifest::current_manifest(dir)?)?;
        let options = OptionsFile::read(dir)?;
        version.check_num_levels(&options)?;
        let cf_id = version.column_family(name).map(|c| c.id).ok_or_else(|| {
            let names: Vec<String> = version
                .column_families
                .values()
                .map(|c| format!("{:?}", c.name))
                .collect();
            // Names quoted and escaped: the message stays one line whatever
            // a MANIFEST names its families.
            DbError::argument(format!(
                "no column family {name:?} (the database has {})",
                names.join(", ")
            ))
        })?;
        // The column family's files move into `levels`: each live file's
        // record is held once (a MANIFEST of 10^6 files held three copies).
        let (cf, files) = match version.column_families.get_mut(&cf_id) {
            Some(c) => {
                let files = std::mem::take(&mut c.files);
                (c.clone(), files)
            }
            None => return Err(DbError::argument(format!("no column family {name:?}"))),
        };
        let comparator = Comparator::from_name(cf.comparator.as_deref());
        if !comparator.is_known() || comparator.timestamp_size != 0 {
            return Err(DbError::unsupported(format!(
                "comparator {:?} is not supported (bytewise and reverse bytewise without timestamps are)",
                cf.comparator.as_deref().unwrap_or("")
            )));
        }
        let manifest_name = version.manifest.display().to_string();
        let mut per_level: Vec<usize> = Vec::new();
        for f in files.values() {
            let level = f.level as usize;
            if per_level.len() <= level {
                per_level.resize(level + 1, 0);
            }
            per_level[level] += 1;
        }
        let mut levels: Vec<Vec<LiveFile>> = per_level.iter().map(|&n| Vec::with_capacity(n)).collect();
        // Each record leaves the map as it is placed (the map's nodes are
        // freed as it is walked).
        for f in files.into_values() {
            if comparator.compare_internal(&f.smallest, &f.largest) == Some(Ordering::Greater) {
                return Err(DbError::corrupt(
                    &manifest_name,
                    format!(
                        "file {}: its smallest key is after its largest in the order of {:?} (does the MANIFEST's comparator match the files?)",
                        f.number,
                        cf.comparator.as_deref().unwrap_or("leveldb.BytewiseComparator")
                    ),
                ));
            }
            let path = sst_path(&file_dir(dir, &f, how)?, f.number);
            levels[f.level as usize].push(LiveFile {
                level: f.level,
                meta: f,
                path,
            });
        }
        if let Some(l0) = levels.first_mut() {
            if l0.len() > MAX_LEVEL0_FILES {
                return Err(DbError::unsupported(format!(
                    "{manifest_name}: {} L0 files, more than the reader's bound of {MAX_LEVEL0_FILES} (compact L0 first)",
                    l0.len()
                )));
            }
            // Newest first: RocksDB's NewestFirstByEpochNumber, then by sequence numbers.
            l0.sort_by(|a, b| {
                let key = |f: &LiveFile| {
                    (
                        f.meta.epoch_number,
                        f.meta.largest_seqno,
                        f.meta.smallest_seqno,
                        f.meta.number,
                    )
                };
                key(b).cmp(&key(a))
            });
        }
        for level in levels.iter_mut().skip(1) {
            level.sort_by(|a, b| {
                comparator
                    .compare_internal(&a.meta.smallest, &b.meta.smallest)
                    .unwrap_or(Ordering::Equal)
            });
            for w in level.windows(2) {
                // Neighbours may share a boundary user key (its entries
                // split between them), never more.
                if comparator.compare_user(w[0].largest_user_key(), w[1].smallest_user_key())
                    == Some(Ordering::Greater)
                {
                    return Err(DbError::corrupt(
                        &manifest_name,
                        format!(
                            "files {} and {} of level {} overlap",
                            w[0].meta.number, w[1].meta.number, w[0].level
                        ),
                    ));
                }
            }
        }
        let wal_dir = how
            .wal_dir
            .clone()
            .or_else(|| options.wal_dir.clone())
            .unwrap_or_else(|| dir.to_path_buf());
        if !wal_dir.is_dir() {
            return Err(DbError::Io {
                path: wal_dir.display().to_string(),
                message: format!(
                    "the WAL directory{} is not a directory; give the WAL directory as the `wal_dir` open option (`--wal-dir`, Python's `wal_dir=`)",
                    options
                        .path
                        .as_ref()
                        .filter(|_| how.wal_dir.is_none())
                        .map_or(String::new(), |p| format!(" named by {}", p.display()))
                ),
            });
        }
        let mut recovery = Recovery {
            mode: options.wal_recovery_mode,
            wal_dir: wal_dir.clone(),
            stopped_at: None,
            skipped_wals: Vec::new(),
        };
        let memtable = replay_wals(&wal_dir, &cf, &mut recovery)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            version,
            column_family: cf,
            comparator,
            levels,
            memtable,
            options,
            recovery,
            blob_dir: how.db_paths.first().cloned().unwrap_or_else(|| dir.to_path_buf()),
        })
    }

    /// The database directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What the MANIFEST says, but for the files of the column family read:
    /// those are in [`Db::levels`] (each live file's record is held once),
    /// and its entry here lists none.
    pub fn version(&self) -> &Version {
        &self.version
    }

    /// What the OPTIONS file says.
    pub fn options(&self) -> &OptionsFile {
        &self.options
    }

    /// How the WALs were replayed.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// The column family read: its id, name, comparator and log number (its
    /// `files` are empty: the live files are [`Db::levels`]).
    pub fn column_family(&self) -> &ColumnFamily {
        &self.column_family
    }

    /// Its comparator.
    pub fn comparator(&self) -> Comparator {
        self.comparator
    }

    /// The live files by level: L0 newest first (the order `Get` asks
    /// them), every other level in key order.
    pub fn levels(&self) -> &[Vec<LiveFile>] {
        &self.levels
    }

    /// Every live file, in the order of [`Db::levels`] (every `Get` path is
    /// a subsequence of it).
    pub fn files(&self) -> impl Iterator<Item = &LiveFile> {
        self.levels.iter().flatten()
    }

    /// The writes of the WALs not yet flushed.
    pub fn memtable(&self) -> &Memtable {
        &self.memtable
    }

    /// The files RocksDB's `FilePicker` hands a `Get` of `user_key`, in
    /// order, before any is read (a `Get` stops earlier when a file holds
    /// the key or a range deletion over it, and never reaches them when the
    /// memtable answers: [`Db::get_paths`] follows all of that). Ported
    /// from `db/version_set.cc` (`FilePicker::GetNextFile`,
    /// `PrepareNextLevel`): when L0 is the only non-empty level and holds 3
    /// files or fewer, every L0 file is asked without a key-range check; on
    /// other levels the binary search finds the first file whose largest
    /// key is at or after the key, and the next file too while the key is
    /// its neighbour's largest user key.
    pub fn candidate_files(&self, user_key: &[u8]) -> Vec<&LiveFile> {
        self.candidates(user_key)
            .into_iter()
            .map(|(level, i)| &self.levels[level][i])
            .collect()
    }

    /// [`Db::candidate_files`] as (level, index in the level).
    pub(crate) fn candidates(&self, user_key: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        self.candidates_into(user_key, &mut out);
        out
    }

    /// Where each level's files start in [`Db::files`].
    pub(crate) fn level_offsets(&self) -> Vec<usize> {
        let mut n = 0;
        self.levels
            .iter()
            .map(|l| {
                n += l.len();
                n - l.len()
            })
            .collect()
    }

    /// [`Db::candidates`], appended to `out`.
    pub(crate) fn candidates_into(&self, user_key: &[u8], out: &mut Vec<(usize, usize)>) {
        let c = self.comparator;
        // `storage_info_.num_non_empty_levels_`: one past the last level with files.
        let non_empty = self
            .levels
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(0, |i| i + 1);
        for (level, files) in self.levels.iter().enumerate().take(non_empty) {
            let check_range = non_empty > 1 || files.len() > 3;
            if level == 0 {
                out.extend(
                    files
                        .iter()
                        .enumerate()
                        .filter(|(_, f)| !check_range || f.covers(user_key, c))
                        .map(|(i, _)| (0, i)),
                );
                continue;
            }
            // FindFileInRange: the first file whose largest internal key is
            // not before (user_key, last sequence, kValueTypeForSeek); a
            // largest key of kMaxSequenceNumber (a range deletion's end) at
            // the same user key sorts before it.
            let mut i = files.partition_point(|f| match compare_user(c, f.largest_user_key(), user_key) {
                Some(Ordering::Less) => true,
                Some(Ordering::Equal) => {
                    key::split_internal(&f.meta.largest).1 >> 8 == key::MAX_SEQUENCE_NUMBER
                }
                _ => false,
            });
            while let Some(f) = files.get(i) {
                if compare_user(c, user_key, f.smallest_user_key()) == Some(Ordering::Less) {
                    break;
                }
                out.push((level, i));
                if compare_user(c, user_key, f.largest_user_key()) != Some(Ordering::Equal) {
                    break;
                }
                i += 1;
            }
        }
    }

    /// [`Db::candidate_files`] (the name of earlier releases).
    pub fn get_path(&self, user_key: &[u8]) -> Vec<&LiveFile> {
        self.candidate_files(user_key)
    }

    /// Opens live file `f`: a regular file of the MANIFEST's size and the
    /// column family's comparator; a file that has gone says whether the
    /// database changed under the reader.
    pub fn open_file(&self, f: &LiveFile) -> Result<SstFile, DbError> {
        let len = match check_regular_file(&f.path) {
            Ok(len) => len,
            Err(e) if !f.path.exists() => return Err(self.vanished(f, e)),
            Err(e) => return Err(e),
        };
        if len != f.meta.file_size {
            return Err(DbError::corrupt(
                &f.path.display().to_string(),
                format!(
                    "{len} bytes, but the MANIFEST says {} (RocksDB refuses a file of the wrong size)",
                    f.meta.file_size
                ),
            ));
        }
        let sst = SstFile::open(&f.path).map_err(|error| match error {
            crate::Error::Io { .. } if !f.path.exists() => self.vanished(
                f,
                DbError::Sst {
                    file: f.name(),
                    error,
                },
            ),
            error => DbError::Sst {
                file: f.path.display().to_string(),
                error,
            },
        })?;
        let theirs = sst.comparator();
        if sst.properties().comparator().is_some() && theirs != self.comparator {
            return Err(DbError::corrupt(
                &f.path.display().to_string(),
                format!(
                    "its comparator {:?} is not the column family's {:?} (the MANIFEST and the files disagree)",
                    sst.properties().comparator().unwrap_or_default(),
                    self.column_family.comparator.as_deref().unwrap_or("leveldb.BytewiseComparator")
                ),
            ));
        }
        Ok(sst)
    }

    /// The sequence number every entry of `f` takes when it is an ingested
    /// file with a global sequence number (`rocksdb.external_sst_file.version`
    /// 2: the MANIFEST's largest sequence number, as RocksDB's
    /// `GetGlobalSequenceNumber` takes it).
    pub fn global_seqno(sst: &SstFile, f: &LiveFile) -> Option<u64> {
        let v = sst.properties().string("rocksdb.external_sst_file.version")?;
        (v.as_bytes() == [2, 0, 0, 0] && f.meta.largest_seqno < key::MAX_SEQUENCE_NUMBER)
            .then_some(f.meta.largest_seqno)
    }

    /// The error for live file `f`, which is missing: whether the MANIFEST
    /// `CURRENT` names now still lists it.
    fn vanished(&self, f: &LiveFile, e: DbError) -> DbError {
        let still = Version::read(&self.dir)
            .ok()
            .and_then(|v| {
                v.column_families
                    .get(&self.column_family.id)
                    .map(|c| c.files.contains_key(&f.meta.number))
            })
            .unwrap_or(true);
        if still {
            return DbError::Io {
                path: f.path.display().to_string(),
                message: format!(
                    "{} (the MANIFEST lists it; if the database has db_paths or cf_paths, give them in order as the `db_paths` open option: `--db-path`, Python's `db_paths=`)",
                    match &e {
                        DbError::Io { message, .. } => message.clone(),
                        other => other.to_string(),
                    }
                ),
            };
        }
        DbError::Io {
            path: f.path.display().to_string(),
            message: "deleted by a compaction while the database was read (it is being written); run again, or read a checkpoint".into(),
        }
    }

    /// Every range deletion of the column family: the memtable's and every
    /// live file's (each file opened once), fragmented.
    pub fn tombstones(&self) -> Result<Tombstones, DbError> {
        let mut all = self.memtable.tombstones.clone();
        for f in self.files() {
            let sst = self.open_file(f)?;
            range_del::read_sst_tombstones(&sst, Self::global_seqno(&sst, f), &f.name(), &mut all)?;
        }
        Ok(Tombstones::new(&all, self.comparator))
    }

    /// Calls `f` with each live user key (its newest entry is not a
    /// deletion, nor covered by a newer range deletion), once each, in
    /// comparator order; returns how many keys were live and how many were
    /// found deleted.
    pub fn for_each_live_key(&self, f: impl FnMut(&[u8])) -> Result<(u64, u64), DbError> {
        let tombstones = self.tombstones()?;
        let mut mem: Vec<(&[u8], u64, EntryKind)> = self.memtable.iter().collect();
        if self.comparator.user == UserComparator::ReverseBytewise {
            mem.reverse();
        }
        // Each L0 file and each deeper level is one source; they share the read-ahead.
        let n_sources = self.levels.first().map_or(0, Vec::len)
            + self.levels.iter().skip(1).filter(|l| !l.is_empty()).count();
        let sources_budget = (merge::READAHEAD_BUDGET / n_sources.max(1) as u64).min(blocks::READAHEAD);
        let mut sources = vec![merge::Source::memtable(mem)];
        for (level, files) in self.levels.iter().enumerate() {
            if level == 0 {
                for f in files {
                    sources.push(merge::Source::files(self, vec![f], sources_budget)?);
                }
            } else if !files.is_empty() {
                sources.push(merge::Source::files(
                    self,
                    files.iter().collect(),
                    sources_budget,
                )?);
            }
        }
        merge::merge(sources, self.comparator, &tombstones, f)
    }
}

/// Where the file `f` is: the DB directory, or `db_paths[path_id]`.
fn file_dir(dir: &Path, f: &FileMeta, how: &OpenOptions) -> Result<PathBuf, DbError> {
    match how.db_paths.get(f.path_id as usize) {
        Some(p) => Ok(p.clone()),
        None if f.path_id == 0 => Ok(dir.to_path_buf()),
        None => Err(DbError::unsupported(format!(
            "file {:06}.sst is in db_paths[{}] (or cf_paths), which RocksDB does not record: give the paths in order as the `db_paths` open option (`--db-path`, Python's `db_paths=`)",
            f.number, f.path_id
        ))),
    }
}

/// Replays the WALs of `recovery.wal_dir` for column family `cf`, as
/// `recovery.mode` says.
fn replay_wals(wal_dir: &Path, cf: &ColumnFamily, recovery: &mut Recovery) -> Result<Memtable, DbError> {
    let mut memtable = Memtable::default();
    for (number, path) in wal::wal_files(wal_dir, cf.log_number)? {
        if recovery.stopped_at.is_some() {
            recovery.skipped_wals.push(number);
            continue;
        }
        let data = read_regular_file(&path, MAX_LOG_FILE)?;
        let name = path.display().to_string();
        let before = memtable.cut_short.len();
        memtable.replay(&data, number, cf.id, &name)?;
        let Some((_, end)) = memtable.cut_short.get(before).cloned() else {
            continue;
        };
        let corrupt = matches!(end, log::LogEnd::Corrupt { .. });
        let what = match &end {
            log::LogEnd::Corrupt { offset, what } => format!("{what} at offset {offset}"),
            log::LogEnd::Truncated { offset } => format!("a record cut short at offset {offset}"),
            log::LogEnd::OldRecord { offset } => {
                format!("a record of an earlier use of the log at offset {offset}")
            }
            log::LogEnd::Clean => continue,
        };
        match recovery.mode {
            WalRecoveryMode::PointInTimeRecovery if corrupt => {
                recovery.stopped_at = Some((number, what));
            }
            WalRecoveryMode::PointInTimeRecovery => {}
            WalRecoveryMode::TolerateCorruptedTailRecords if !corrupt => {}
            WalRecoveryMode::SkipAnyCorruptedRecords => {
                return Err(DbError::unsupported(format!(
                    "{name}: {what}; wal_recovery_mode kSkipAnyCorruptedRecords would skip it and read on, which this reader cannot"
                )))
            }
            mode => {
                return Err(DbError::corrupt(
                    &name,
                    format!("{what} (wal_recovery_mode {} refuses it)", mode.name()),
                ))
            }
        }
    }
    Ok(memtable)
}

/// The path of SST file `number` in `dir` (`NNNNNN.sst`; the `.ldb` name of
/// older databases when only that exists).
pub fn sst_path(dir: &Path, number: u64) -> PathBuf {
    let sst = dir.join(format!("{number:06}.sst"));
    let ldb = dir.join(format!("{number:06}.ldb"));
    if !sst.exists() && ldb.exists() {
        ldb
    } else {
        sst
    }
}
