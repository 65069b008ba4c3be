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
//! **Contracts.** [`Db::open`] reads `CURRENT`, the MANIFEST it names, and
//! every WAL at or above the column family's log number (the writes not
//! yet flushed: they are replayed, so a database that was closed without
//! a flush reads correctly; see [`wal`] for what is refused). It opens no
//! SST file. [`Db::for_each_live_key`] reports each user key whose newest
//! entry (memtable, then L0 newest first, then each level) is not a
//! deletion, exactly once, in comparator order; it refuses range
//! deletions, user-defined timestamps and comparators this crate cannot
//! reproduce rather than give a wrong answer. Files in `db_paths` other
//! than the DB directory, and WALs in a separate `wal_dir`, are not found
//! (an error names the missing file).
//!
//! **Hostile input.** MANIFEST and WAL files are read whole (memory linear
//! in their size) and every record is bounds-checked and checksummed;
//! SST files are read through [`crate::SstFile`] with its budgets, one data
//! block per source at a time ([`merge`]). Errors are one line
//! ([`DbError`]), never a panic.

mod blocks;
mod data_keys;
pub mod error;
pub mod log;
pub mod manifest;
pub mod merge;
pub mod wal;

pub use error::DbError;
pub use manifest::{ColumnFamily, FileMeta, Version};
pub use merge::for_each_file_key;
pub use wal::{EntryKind, Memtable};

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
        c.compare_user(self.smallest_user_key(), user_key) != Some(Ordering::Greater)
            && c.compare_user(user_key, self.largest_user_key()) != Some(Ordering::Greater)
    }
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
}

impl Db {
    /// Opens the default column family of the database in `dir`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, DbError> {
        Self::open_column_family(dir, "default")
    }

    /// Opens column family `name` of the database in `dir`.
    pub fn open_column_family(dir: impl AsRef<Path>, name: &str) -> Result<Self, DbError> {
        let dir = dir.as_ref();
        let version = Version::read(dir)?;
        let cf = version.column_family(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = version
                .column_families
                .values()
                .map(|c| c.name.as_str())
                .collect();
            DbError::unsupported(format!(
                "no column family {name:?} (the database has {})",
                names.join(", ")
            ))
        })?;
        let comparator = Comparator::from_name(cf.comparator.as_deref());
        if !comparator.is_known() || comparator.timestamp_size != 0 {
            return Err(DbError::unsupported(format!(
                "comparator {:?} is not supported (bytewise and reverse bytewise without timestamps are)",
                cf.comparator.as_deref().unwrap_or("")
            )));
        }
        let mut levels: Vec<Vec<LiveFile>> = Vec::new();
        for f in cf.files.values() {
            if f.path_id != 0 {
                return Err(DbError::unsupported(format!(
                    "file {} is in db_paths[{}], outside the DB directory: not supported",
                    f.number, f.path_id
                )));
            }
            let level = f.level as usize;
            if levels.len() <= level {
                levels.resize(level + 1, Vec::new());
            }
            levels[level].push(LiveFile {
                level: f.level,
                meta: f.clone(),
                path: sst_path(dir, f.number),
            });
        }
        if let Some(l0) = levels.first_mut() {
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
                if comparator.compare_user(w[0].largest_user_key(), w[1].smallest_user_key())
                    != Some(Ordering::Less)
                {
                    return Err(DbError::corrupt(
                        &version.manifest.display().to_string(),
                        format!(
                            "files {} and {} of level {} overlap",
                            w[0].meta.number, w[1].meta.number, w[0].level
                        ),
                    ));
                }
            }
        }
        let mut memtable = Memtable::default();
        for (number, path) in wal::wal_files(dir, cf.log_number)? {
            let data = std::fs::read(&path).map_err(|e| DbError::io(&path, &e))?;
            memtable.replay(&data, number, cf.id, &path.display().to_string())?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            version,
            column_family: cf,
            comparator,
            levels,
            memtable,
        })
    }

    /// The database directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// What the MANIFEST says.
    pub fn version(&self) -> &Version {
        &self.version
    }

    /// The column family read.
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

    /// Every live file, in the order of [`Db::levels`].
    pub fn files(&self) -> impl Iterator<Item = &LiveFile> {
        self.levels.iter().flatten()
    }

    /// The writes of the WALs not yet flushed.
    pub fn memtable(&self) -> &Memtable {
        &self.memtable
    }

    /// The files whose key ranges hold `user_key`, in the order RocksDB's
    /// `Get` asks them: every L0 file whose range covers it, newest first,
    /// then on each level the one file whose range covers it. (`Get` asks
    /// each file's filter, and stops at the first file that holds the key;
    /// the memtable comes before all of them: [`Db::memtable`].)
    pub fn get_path(&self, user_key: &[u8]) -> Vec<&LiveFile> {
        let c = self.comparator;
        let mut out = Vec::new();
        for (level, files) in self.levels.iter().enumerate() {
            if level == 0 {
                out.extend(files.iter().filter(|f| f.covers(user_key, c)));
                continue;
            }
            // The first file whose largest key is at or after the key.
            let i = files
                .partition_point(|f| c.compare_user(f.largest_user_key(), user_key) == Some(Ordering::Less));
            if let Some(f) = files.get(i).filter(|f| f.covers(user_key, c)) {
                out.push(f);
            }
        }
        out
    }

    /// Calls `f` with each live user key (its newest entry is not a
    /// deletion), once each, in comparator order; returns how many keys
    /// were live and how many were found deleted.
    pub fn for_each_live_key(&self, f: impl FnMut(&[u8])) -> Result<(u64, u64), DbError> {
        let mut mem: Vec<(&[u8], EntryKind)> = self.memtable.iter().map(|(k, _, t)| (k, t)).collect();
        if self.comparator.user == UserComparator::ReverseBytewise {
            mem.reverse();
        }
        let mut sources = vec![merge::Source::memtable(mem)];
        for (level, files) in self.levels.iter().enumerate() {
            let named = |f: &LiveFile| (f.name(), f.path.clone());
            if level == 0 {
                for f in files {
                    sources.push(merge::Source::files(vec![named(f)], self.comparator)?);
                }
            } else if !files.is_empty() {
                sources.push(merge::Source::files(
                    files.iter().map(named).collect(),
                    self.comparator,
                )?);
            }
        }
        merge::merge(sources, self.comparator, f)
    }
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
