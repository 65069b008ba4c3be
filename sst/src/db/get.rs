//! The path of a `Get`: what the memtable answers, then each file RocksDB
//! asks, in order, up to the one where it stops.
//!
//! Ported in behaviour from RocksDB's `db/db_impl/db_impl.cc` (`GetImpl`:
//! the memtable first; a value or deletion there ends the lookup),
//! `db/memtable.cc` (`MemTable::Get`: the newest range tombstone over the
//! key is taken first), `db/version_set_sync_and_async.h` (`Version::Get`:
//! the files of [`Db::candidate_files`] in turn, stopping before the next
//! file once any range tombstone over the key has been seen),
//! `db/table_cache_sync_and_async.h` (`TableCache::Get`: a file's range
//! tombstones are read before its filter is asked), `table/block_based/
//! block_based_table_reader.cc` (the filter: "no" ends the file) and
//! `table/get_context.cc` (`SaveValue`: a value or deletion ends the
//! lookup, merge operands go on to older entries and files; an entry under
//! a newer range tombstone is a deletion).
//!
//! Every `Get` path is a subsequence of [`Db::files`] (L0 newest first,
//! then each level in key order), so a batch of keys is answered file by
//! file: each file is opened once per batch (a bounded cache keeps files
//! open across batches), asked for the keys still looking, and read (its
//! index, then the data blocks that may hold them) only for the keys its
//! filter may hold. Memory: the batch's paths, plus the open files.

use super::data_keys::KeyWalk;
use super::error::DbError;
use super::merge::entry_kind;
use super::range_del::{self, Tombstones};
use super::wal::EntryKind;
use super::Db;
use crate::budget::ReadBudget;
use crate::handle::BlockHandle;
use crate::key::{self, Comparator};
use crate::table::SstFile;
use core::cmp::Ordering;
use std::collections::HashMap;

/// At most this many files are kept open between batches.
pub const MAX_OPEN_FILES: usize = 256;

/// What the memtable (the unflushed writes) answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemtableAnswer {
    /// No write of the key and no range deletion over it.
    None,
    /// The newest write is a value: `Get` ends here.
    Value,
    /// The newest write is a deletion: `Get` ends here.
    Deleted,
    /// Merge operands only: `Get` goes on to the files.
    Merge,
    /// A range deletion covers the key (and any older write): `Get` ends here.
    RangeDeleted,
}

impl MemtableAnswer {
    /// Its name in reports (`value`, `deleted`, `none`, `merge`, `range-deleted`).
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Value => "value",
            Self::Deleted => "deleted",
            Self::Merge => "merge",
            Self::RangeDeleted => "range-deleted",
        }
    }
}

/// What one file answers a `Get`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAnswer {
    /// Its filter said the key is not there.
    Filtered,
    /// Its filter may hold the key, but the file does not.
    Absent,
    /// The file's newest entry of the key: a value, a deletion, or merge
    /// operands only (then `Get` goes on).
    Found(EntryKind),
}

/// One file a `Get` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The file's index in [`Db::files`].
    pub file: usize,
    /// Whether its filter may hold the key (RocksDB counts `false` in
    /// `rocksdb.bloom.filter.useful`, `true` in
    /// `rocksdb.bloom.filter.full.positive`, for files with a whole-key
    /// filter; `true` for a file without one).
    pub may_match: bool,
    /// Whether the file has a whole-key filter that was asked (a file of
    /// range deletions only has none: RocksDB counts nothing for it).
    pub has_filter: bool,
    /// What the file answers.
    pub answer: FileAnswer,
    /// Whether a range deletion of this file covers the key (`Get` asks no
    /// further file).
    pub range_deleted: bool,
}

/// The whole path of one `Get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetPath {
    /// What the memtable answers.
    pub memtable: MemtableAnswer,
    /// The files asked, in order (none when the memtable ends the lookup).
    pub steps: Vec<Step>,
    /// Whether `Get` returns a value (`table/get_context.cc`'s states: a
    /// value, or merge operands over anything, found before a deletion or
    /// a newer range deletion).
    pub found: bool,
}

impl GetPath {
    /// Whether the key is found (RocksDB's `Get` returns a value).
    pub fn found(&self) -> bool {
        self.found
    }
}

/// `GetContext`'s state while the lookup goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    NotFound,
    Merge,
}

/// A file opened for lookups.
struct OpenFile {
    sst: SstFile,
    tombstones: Tombstones,
    global_seqno: Option<u64>,
    /// The data blocks' separators (user keys) and handles, read on the
    /// first lookup.
    index: Option<Vec<(Vec<u8>, BlockHandle)>>,
}

/// The files kept open between batches of [`Db::get_paths`].
#[derive(Default)]
pub struct FileCache {
    open: HashMap<usize, OpenFile>,
    memtable_tombstones: Option<Tombstones>,
}

impl core::fmt::Debug for FileCache {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "FileCache({} open)", self.open.len())
    }
}

impl FileCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Db {
    /// The indices in [`Db::files`] of [`Db::candidate_files`].
    pub fn candidate_indices(&self, user_key: &[u8]) -> Vec<usize> {
        let mut offsets = Vec::with_capacity(self.levels().len());
        let mut n = 0;
        for l in self.levels() {
            offsets.push(n);
            n += l.len();
        }
        self.candidates(user_key)
            .into_iter()
            .map(|(level, i)| offsets[level] + i)
            .collect()
    }

    /// The `Get` path of each key of `keys` (user keys), in order: what the
    /// memtable answers, then each file asked up to the one where RocksDB's
    /// `Get` stops. `cache` keeps files open between calls.
    pub fn get_paths<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        cache: &mut FileCache,
    ) -> Result<Vec<GetPath>, DbError> {
        let c = self.comparator();
        let mem_tombstones = cache
            .memtable_tombstones
            .get_or_insert_with(|| Tombstones::new(&self.memtable().tombstones, c))
            .clone();
        let files: Vec<_> = self.files().collect();
        let mut out = Vec::with_capacity(keys.len());
        let mut by_file: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
        let mut looking = vec![false; keys.len()];
        // Each key's GetContext state and the newest range tombstone seen.
        let mut state: Vec<(State, u64)> = Vec::with_capacity(keys.len());
        for (k, key) in keys.iter().enumerate() {
            let key = key.as_ref();
            let covering = mem_tombstones.max_covering(key, c);
            let (memtable, ends) = match self.memtable().entry(key) {
                Some(e) if covering > e.seq => (MemtableAnswer::RangeDeleted, true),
                Some(e) => (
                    match e.kind {
                        EntryKind::Value => MemtableAnswer::Value,
                        EntryKind::Deletion => MemtableAnswer::Deleted,
                        EntryKind::Merge => MemtableAnswer::Merge,
                    },
                    e.ends_search || covering > 0,
                ),
                None if covering > 0 => (MemtableAnswer::RangeDeleted, true),
                None => (MemtableAnswer::None, false),
            };
            // Found when the memtable ends the lookup with a value, or with
            // merge operands over anything (a value, a deletion, a range
            // deletion, or nothing).
            let found = matches!(memtable, MemtableAnswer::Value | MemtableAnswer::Merge);
            out.push(GetPath {
                memtable,
                steps: Vec::new(),
                found,
            });
            state.push((
                if memtable == MemtableAnswer::Merge {
                    State::Merge
                } else {
                    State::NotFound
                },
                0u64,
            ));
            if !ends {
                looking[k] = true;
                for g in self.candidate_indices(key) {
                    by_file[g].push(k);
                }
            }
        }
        for (g, asked) in by_file.iter().enumerate() {
            let asked: Vec<usize> = asked.iter().copied().filter(|&k| looking[k]).collect();
            if asked.is_empty() {
                continue;
            }
            if !cache.open.contains_key(&g) {
                if cache.open.len() >= MAX_OPEN_FILES {
                    cache.open.clear();
                }
                let f = files[g];
                let sst = self.open_file(f)?;
                let global_seqno = Db::global_seqno(&sst, f);
                let mut list = Vec::new();
                range_del::read_sst_tombstones(&sst, global_seqno, &f.name(), &mut list)?;
                cache.open.insert(
                    g,
                    OpenFile {
                        tombstones: Tombstones::new(&list, c),
                        sst,
                        global_seqno,
                        index: None,
                    },
                );
            }
            let Some(file) = cache.open.get_mut(&g) else {
                continue;
            };
            let batch: Vec<&[u8]> = asked.iter().map(|&k| keys[k].as_ref()).collect();
            let may = file.sst.key_may_match_many(&batch);
            // The keys the filter may hold, looked up in comparator order.
            let mut positive: Vec<usize> = (0..asked.len()).filter(|&i| may[i]).collect();
            positive.sort_by(|&a, &b| c.compare_user(batch[a], batch[b]).unwrap_or(Ordering::Equal));
            let has_filter =
                file.sst.whole_key_filtering() && !matches!(file.sst.filter(), crate::Filter::None);
            let mut answers = vec![FileAnswer::Filtered; asked.len()];
            let mut entries: Vec<Vec<(u64, EntryKind)>> = vec![Vec::new(); asked.len()];
            let name = files[g].name();
            let mut reader = BlockReader::default();
            for &i in &positive {
                entries[i] = file.lookup(batch[i], c, &mut reader, &name)?;
                answers[i] = match entries[i].first() {
                    None => FileAnswer::Absent,
                    Some(_) => FileAnswer::Found(
                        entries[i]
                            .iter()
                            .map(|e| e.1)
                            .find(|k| *k != EntryKind::Merge)
                            .map_or(EntryKind::Merge, |k| {
                                if entries[i][0].1 == EntryKind::Merge {
                                    EntryKind::Value
                                } else {
                                    k
                                }
                            }),
                    ),
                };
            }
            for (i, &k) in asked.iter().enumerate() {
                let covering = file.tombstones.max_covering(batch[i], c);
                let (st, max_cov) = &mut state[k];
                *max_cov = (*max_cov).max(covering);
                out[k].steps.push(Step {
                    file: g,
                    may_match: may[i],
                    has_filter,
                    answer: answers[i],
                    range_deleted: covering > 0,
                });
                // SaveValue over the file's entries, newest first.
                let mut ended = None;
                for &(seq, kind) in &entries[i] {
                    let kind = if *max_cov > seq { EntryKind::Deletion } else { kind };
                    match kind {
                        EntryKind::Value => ended = Some(true),
                        EntryKind::Deletion => ended = Some(*st == State::Merge),
                        EntryKind::Merge => *st = State::Merge,
                    }
                    if ended.is_some() {
                        break;
                    }
                }
                match ended {
                    Some(found) => {
                        out[k].found = found;
                        looking[k] = false;
                    }
                    // No file after one with a range deletion over the key.
                    None if *max_cov > 0 => {
                        out[k].found = *st == State::Merge;
                        looking[k] = false;
                    }
                    None => out[k].found = *st == State::Merge,
                }
            }
        }
        Ok(out)
    }
}

/// The decoded keys of the data block read last.
#[derive(Default)]
struct BlockReader {
    block: Option<usize>,
    bytes: Vec<u8>,
    /// (end of the user key in `bytes`, footer).
    entries: Vec<(usize, u64)>,
}

impl BlockReader {
    fn entry(&self, i: usize) -> (&[u8], u64) {
        let start = if i == 0 { 0 } else { self.entries[i - 1].0 };
        let (end, footer) = self.entries[i];
        (&self.bytes[start..end], footer)
    }

    fn load(&mut self, sst: &SstFile, b: usize, h: BlockHandle, name: &str) -> Result<(), DbError> {
        if self.block == Some(b) {
            return Ok(());
        }
        self.block = None;
        self.bytes.clear();
        self.entries.clear();
        let err = |error| DbError::Sst {
            file: name.to_string(),
            error,
        };
        let raw = sst.read_data_block(h).map_err(err)?;
        let (bytes, entries) = (&mut self.bytes, &mut self.entries);
        KeyWalk::default()
            .block(&raw.contents, h, sst.restart_interval(), |e| {
                let (user, footer) = e.split();
                bytes.extend_from_slice(user);
                entries.push((bytes.len(), footer));
                Ok(())
            })
            .map_err(err)?;
        self.block = Some(b);
        Ok(())
    }
}

impl OpenFile {
    /// The file's entries of `user_key`, newest first, up to and including
    /// the first that is not a merge operand (empty: the file does not hold
    /// the key); sequence numbers are the file's global one if it has one.
    fn lookup(
        &mut self,
        user_key: &[u8],
        c: Comparator,
        reader: &mut BlockReader,
        name: &str,
    ) -> Result<Vec<(u64, EntryKind)>, DbError> {
        if self.index.is_none() {
            let mut index = Vec::new();
            let user_keys = self.sst.properties().index_key_is_user_key();
            let mut budget = ReadBudget::for_data(self.sst.file_len());
            let walk = self.sst.index().map_err(|error| DbError::Sst {
                file: name.to_string(),
                error,
            })?;
            walk.for_each_data_block_keyed(&mut budget, &mut |sep, h| {
                let user = if user_keys {
                    sep
                } else {
                    key::split_internal(sep).0
                };
                index.push((user.to_vec(), h));
                Ok(())
            })
            .map_err(|error| DbError::Sst {
                file: name.to_string(),
                error,
            })?;
            self.index = Some(index);
            *reader = BlockReader::default();
        }
        let index = self.index.as_deref().unwrap_or_default();
        let mut b = index.partition_point(|(s, _)| c.compare_user(s, user_key) == Some(Ordering::Less));
        let mut out = Vec::new();
        while let Some(&(_, h)) = index.get(b) {
            reader.load(&self.sst, b, h, name)?;
            let n = reader.entries.len();
            // The first entry at or after the key (binary search).
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if c.compare_user(reader.entry(mid).0, user_key) == Some(Ordering::Less) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            let mut i = lo;
            while i < n {
                let (k, footer) = reader.entry(i);
                if k != user_key {
                    return Ok(out);
                }
                let kind = entry_kind((footer & 0xff) as u8).map_err(|w| DbError::corrupt(name, w))?;
                out.push((self.global_seqno.unwrap_or(footer >> 8), kind));
                if kind != EntryKind::Merge {
                    return Ok(out);
                }
                i += 1;
            }
            b += 1;
        }
        Ok(out)
    }
}
