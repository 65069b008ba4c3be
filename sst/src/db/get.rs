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
//! a newer range tombstone is a deletion). A value the lookup ends at (or
//! merges onto) that is a blob index is checked as `Version::GetBlob` would
//! fail on it ([`super::blob`]).
//!
//! Every `Get` path is a subsequence of [`Db::files`] (L0 newest first,
//! then each level in key order), so a batch of keys is answered file by
//! file: each file is opened once per batch (a bounded cache keeps files
//! open across batches), asked for the keys still looking, and read (its
//! index, then the data blocks that may hold them) only for the keys its
//! filter may hold. Memory: the batch's paths, plus the open files.

use super::blob::{self, BlobRef};
use super::data_keys::KeyWalk;
use super::error::DbError;
use super::merge::entry_kind;
use super::range_del::{self, Tombstones};
use super::wal::EntryKind;
use super::{compare_user, Db};
use crate::block_layout::Layout;
use crate::budget::ReadBudget;
use crate::coding::Reader;
use crate::error::BlockKind;
use crate::handle::BlockHandle;
use crate::key::{self, Comparator};
use crate::table::SstFile;
use core::cmp::Ordering;
use std::collections::{HashMap, HashSet, VecDeque};

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
    /// Its filter may hold the key, and its data was not read: no later
    /// file can be asked, and [`Detail::Filters`] was asked for (only the
    /// files and their filters' answers).
    NotRead,
}

impl FileAnswer {
    /// Its name in reports (`filtered`, `absent`, `value`, `deleted`,
    /// `merge`, `not-read`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Filtered => "filtered",
            Self::Absent => "absent",
            Self::Found(EntryKind::Value) => "value",
            Self::Found(EntryKind::Deletion) => "deleted",
            Self::Found(EntryKind::Merge) => "merge",
            Self::NotRead => "not-read",
        }
    }
}

/// How much of each `Get` path [`Db::get_paths_with`] works out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// Everything: each file's answer, and whether `Get` finds the key.
    #[default]
    Full,
    /// The files asked and their filters' answers, exactly as with
    /// [`Detail::Full`]; but a file whose filter may hold the key is not
    /// read when no later file can be asked (its answer is
    /// [`FileAnswer::NotRead`], and [`GetPath::outcome`] is then `None`).
    /// Reading that data block is most of the cost of a `Get` path.
    Filters,
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
    /// a newer range deletion); `false` when unknown (see
    /// [`GetPath::outcome`]).
    pub found: bool,
}

impl GetPath {
    /// Whether the key is found (RocksDB's `Get` returns a value). `false`
    /// also when that is unknown (a path of [`Detail::Filters`] whose last
    /// file was not read): [`GetPath::outcome`] tells the two apart.
    pub fn found(&self) -> bool {
        self.found
    }

    /// Whether the key is found; `None` when that depends on the last file
    /// asked, which was not read ([`FileAnswer::NotRead`], under
    /// [`Detail::Filters`]).
    pub fn outcome(&self) -> Option<bool> {
        match self.steps.last() {
            // Merge operands found earlier make `Get` find the key whatever
            // the last file holds.
            Some(s) if s.answer == FileAnswer::NotRead && !self.found => None,
            _ => Some(self.found),
        }
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
    blocks: BlockCache,
    memtable_tombstones: Option<Tombstones>,
    /// The blob files found where a blob index said.
    blobs_checked: HashSet<u64>,
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
    /// Refuses what `Get` would fail on when it reads the value `blob`
    /// refers to (`what` names where the blob index is): a blob index
    /// RocksDB refuses, a blob file the MANIFEST does not list ("Invalid
    /// blob file number"), a listed blob file that is not there. `checked`
    /// holds the blob files already found.
    fn check_blob(&self, blob: BlobRef, what: &str, checked: &mut HashSet<u64>) -> Result<(), DbError> {
        let number = match blob {
            BlobRef::None | BlobRef::SameFile => return Ok(()),
            BlobRef::Bad(why) => return Err(DbError::corrupt(what, format!("{why}: RocksDB's Get fails"))),
            BlobRef::File(n) if checked.contains(&n) => return Ok(()),
            BlobRef::File(n) => n,
        };
        if !self.column_family().blob_files.contains(&number) {
            return Err(DbError::corrupt(
                what,
                format!(
                    "a blob index refers to blob file {number:06}.blob, which the MANIFEST does not list (RocksDB's Get fails: \"Invalid blob file number\")"
                ),
            ));
        }
        let path = self.blob_dir.join(format!("{number:06}.blob"));
        super::check_regular_file(&path).map_err(|e| DbError::Io {
            path: path.display().to_string(),
            message: format!(
                "{} (the MANIFEST lists it and a blob index of {what} refers to it: RocksDB's Get fails)",
                match &e {
                    DbError::Io { message, .. } => message.clone(),
                    other => other.to_string(),
                }
            ),
        })?;
        checked.insert(number);
        Ok(())
    }

    /// The indices in [`Db::files`] of [`Db::candidate_files`].
    pub fn candidate_indices(&self, user_key: &[u8]) -> Vec<usize> {
        let offsets = self.level_offsets();
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
        self.get_paths_with(keys, cache, Detail::Full)
    }

    /// [`Db::get_paths`], working out `detail` of each path: with
    /// [`Detail::Filters`] the files asked and their filters' answers are
    /// the same, but the data of a file after which no file can be asked
    /// is not read.
    pub fn get_paths_with<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        cache: &mut FileCache,
        detail: Detail,
    ) -> Result<Vec<GetPath>, DbError> {
        let c = self.comparator();
        // Taken out of the cache for the call (not copied: a memtable may
        // hold many range deletions) and put back at its end.
        let mem_tombstones = cache
            .memtable_tombstones
            .take()
            .unwrap_or_else(|| Tombstones::new(&self.memtable().tombstones, c));
        let offsets = self.level_offsets();
        // File `g` of [`Db::files`] (a level found among a few offsets: no
        // work per file of the database on each call).
        let file_at = |g: usize| {
            let level = offsets.partition_point(|&o| o <= g) - 1;
            &self.levels[level][g - offsets[level]]
        };
        let mut out = Vec::with_capacity(keys.len());
        // (file, key) for every file each key may ask, grouped by file below.
        let mut by_file: Vec<(u32, u32)> = Vec::new();
        let mut looking = vec![false; keys.len()];
        // The last file each key may ask (`usize::MAX`: none).
        let mut last_file = vec![usize::MAX; keys.len()];
        // Each key's GetContext state and the newest range tombstone seen.
        let mut state: Vec<(State, u64)> = Vec::with_capacity(keys.len());
        let mut candidates = Vec::new();
        let no_memtable = self.memtable().is_empty() && mem_tombstones.is_empty();
        for (k, key) in keys.iter().enumerate() {
            let key = key.as_ref();
            let (memtable, ends) = if no_memtable {
                (MemtableAnswer::None, false)
            } else {
                let covering = mem_tombstones.max_covering(key, c);
                match self.memtable().entry(key) {
                    Some(e) if covering > e.seq => (MemtableAnswer::RangeDeleted, true),
                    Some(e) => (
                        match e.kind {
                            EntryKind::Value => {
                                self.check_blob(
                                    e.blob,
                                    "an unflushed write (WAL)",
                                    &mut cache.blobs_checked,
                                )?;
                                MemtableAnswer::Value
                            }
                            EntryKind::Deletion => MemtableAnswer::Deleted,
                            EntryKind::Merge => MemtableAnswer::Merge,
                        },
                        e.ends_search || covering > 0,
                    ),
                    None if covering > 0 => (MemtableAnswer::RangeDeleted, true),
                    None => (MemtableAnswer::None, false),
                }
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
                candidates.clear();
                self.candidates_into(key, &mut candidates);
                for &(level, i) in &candidates {
                    let g = offsets[level] + i;
                    by_file.push((g as u32, k as u32));
                    last_file[k] = g;
                }
                // One allocation for the key's steps.
                out[k].steps.reserve_exact(candidates.len());
            }
        }
        let mut asked: Vec<usize> = Vec::new();
        let mut batch: Vec<&[u8]> = Vec::new();
        let mut positive: Vec<usize> = Vec::new();
        let mut answers: Vec<FileAnswer> = Vec::new();
        // The entries each asked key's lookup found: `spans[i]` in `found_entries`.
        let mut found_entries: Vec<(u64, EntryKind, BlobRef)> = Vec::new();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        // Files in order (L0 newest first, then level by level), each
        // file's keys in the batch's order: every key asks its files in
        // RocksDB's order.
        by_file.sort_unstable();
        for group in by_file.chunk_by(|a, b| a.0 == b.0) {
            let g = group[0].0 as usize;
            asked.clear();
            asked.extend(group.iter().map(|&(_, k)| k as usize).filter(|&k| looking[k]));
            if asked.is_empty() {
                continue;
            }
            if !cache.open.contains_key(&g) {
                if cache.open.len() >= MAX_OPEN_FILES {
                    cache.open.clear();
                }
                let f = file_at(g);
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
            batch.clear();
            batch.extend(asked.iter().map(|&k| keys[k].as_ref()));
            let may = file.sst.key_may_match_many(&batch);
            let has_filter =
                file.sst.whole_key_filtering() && !matches!(file.sst.filter(), crate::Filter::None);
            answers.clear();
            answers.resize(asked.len(), FileAnswer::Filtered);
            spans.clear();
            spans.resize(asked.len(), (0, 0));
            found_entries.clear();
            // The keys the filter may hold and whose data must be read,
            // looked up in comparator order (keys in one data block share
            // one decode).
            positive.clear();
            for (i, &k) in asked.iter().enumerate() {
                if !may[i] {
                    continue;
                }
                if detail == Detail::Filters && last_file[k] == g {
                    answers[i] = FileAnswer::NotRead;
                } else {
                    positive.push(i);
                }
            }
            positive.sort_by(|&a, &b| compare_user(c, batch[a], batch[b]).unwrap_or(Ordering::Equal));
            let name = file_at(g).name();
            for &i in &positive {
                let start = found_entries.len();
                file.lookup(g, batch[i], c, &mut cache.blocks, &name, &mut found_entries)?;
                spans[i] = (start, found_entries.len());
                let entries = &found_entries[start..];
                answers[i] = match entries.first() {
                    None => FileAnswer::Absent,
                    // Merge operands over a value or deletion read as a value.
                    Some(&(_, EntryKind::Merge, _)) => {
                        FileAnswer::Found(if entries.iter().any(|e| e.1 != EntryKind::Merge) {
                            EntryKind::Value
                        } else {
                            EntryKind::Merge
                        })
                    }
                    Some(&(_, kind, _)) => FileAnswer::Found(kind),
                };
            }
            let no_tombstones = file.tombstones.is_empty();
            for (i, &k) in asked.iter().enumerate() {
                let covering = if no_tombstones {
                    0
                } else {
                    file.tombstones.max_covering(batch[i], c)
                };
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
                let (from, to) = spans[i];
                for &(seq, kind, blob) in &found_entries[from..to] {
                    let kind = if *max_cov > seq { EntryKind::Deletion } else { kind };
                    if kind == EntryKind::Value {
                        // `Get` reads the value it ends at (or merges onto).
                        self.check_blob(blob, &name, &mut cache.blobs_checked)?;
                    }
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
        cache.memtable_tombstones = Some(mem_tombstones);
        Ok(out)
    }
}

/// At most this many bytes of decompressed data blocks are kept between
/// lookups (RocksDB's block cache; blocks go first in, first out).
pub const BLOCK_CACHE_BYTES: usize = 64 << 20;

/// Decompressed data blocks, by (index in [`Db::files`], block index).
#[derive(Default)]
struct BlockCache {
    blocks: HashMap<(usize, usize), Vec<u8>>,
    order: VecDeque<(usize, usize)>,
    bytes: usize,
}

impl BlockCache {
    /// The contents of block `b` (at `h`) of file `g`, read from `sst` when
    /// not cached (checksum verified, decompressed).
    fn get(
        &mut self,
        sst: &SstFile,
        g: usize,
        b: usize,
        h: BlockHandle,
        name: &str,
    ) -> Result<&[u8], DbError> {
        if !self.blocks.contains_key(&(g, b)) {
            let raw = sst.read_data_block(h).map_err(|error| DbError::Sst {
                file: name.to_string(),
                error,
            })?;
            let contents = raw.contents.into_owned();
            while self.bytes + contents.len() > BLOCK_CACHE_BYTES {
                let Some(old) = self.order.pop_front() else {
                    break;
                };
                if let Some(v) = self.blocks.remove(&old) {
                    self.bytes -= v.len();
                }
            }
            self.bytes += contents.len();
            self.order.push_back((g, b));
            self.blocks.insert((g, b), contents);
        }
        Ok(self.blocks.get(&(g, b)).map_or(&[], |v| v.as_slice()))
    }
}

/// One key looked up in one file's data blocks.
#[derive(Clone, Copy)]
struct Probe<'a> {
    user_key: &'a [u8],
    c: Comparator,
    /// The file's global sequence number, if it has one.
    global_seqno: Option<u64>,
    /// The file's name, for errors.
    name: &'a str,
}

impl Probe<'_> {
    /// Takes one entry of a data block, in key order (its user key and its
    /// internal key's footer): an entry before the key is passed over; the
    /// key's entries go into `out`, newest first (the sequence number the
    /// file's global one if it has one), up to the first that is not a
    /// merge operand; an entry after the key ends the lookup.
    /// [`Seek::Done`] when the lookup is over, [`Seek::NextBlock`] when it
    /// goes on (to the next entry, then the next block).
    #[inline]
    fn take(
        &self,
        user: &[u8],
        footer: u64,
        value: &[u8],
        out: &mut Vec<(u64, EntryKind, BlobRef)>,
    ) -> Result<Seek, DbError> {
        match compare_user(self.c, user, self.user_key) {
            Some(Ordering::Less) => return Ok(Seek::NextBlock),
            Some(Ordering::Equal) => {}
            _ => return Ok(Seek::Done),
        }
        let kind = entry_kind((footer & 0xff) as u8).map_err(|w| DbError::corrupt(self.name, w))?;
        let blob = if (footer & 0xff) as u8 == blob::BLOB_INDEX_TYPE {
            blob::decode(value)
        } else {
            BlobRef::None
        };
        out.push((self.global_seqno.unwrap_or(footer >> 8), kind, blob));
        Ok(if kind == EntryKind::Merge {
            Seek::NextBlock
        } else {
            Seek::Done
        })
    }
}

/// Whether a block lookup is over or goes on into the next block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seek {
    Done,
    NextBlock,
}

/// The footer bits that are flags, not the restart count
/// (`table/block_based/data_block_footer.cc`).
const FOOTER_FLAGS: u32 = 0xf << 28;

/// One entry's header at `pos` of `data`: (shared, non-shared, value
/// length, start of the key bytes); `None` when it does not fit.
#[inline]
fn entry_header(data: &[u8], pos: usize) -> Option<(usize, usize, usize, usize)> {
    match data.get(pos..pos + 3) {
        Some(&[s, n, v]) if (s | n | v) < 0x80 => {
            Some((usize::from(s), usize::from(n), usize::from(v), pos + 3))
        }
        _ => {
            let mut r = Reader::new(data.get(pos..)?);
            let s = r.varint32()? as usize;
            let n = r.varint32()? as usize;
            let v = r.varint32()? as usize;
            Some((s, n, v, pos + r.position()))
        }
    }
}

/// Appends to `out` the entries of `user_key` in `contents` (a data block
/// at `h`, keys and values stored together), newest first, up to the first
/// that is not a merge operand: the restart point is found by binary
/// search, then entries are decoded from there (`Block::Seek` in
/// `table/block_based/block.cc`). [`Seek::NextBlock`] when the block ends
/// while the key may go on into the next one.
fn seek_block(
    contents: &[u8],
    layout: Layout,
    h: BlockHandle,
    p: Probe<'_>,
    out: &mut Vec<(u64, EntryKind, BlobRef)>,
) -> Result<Seek, DbError> {
    let Probe {
        user_key, c, name, ..
    } = p;
    let corrupt = |what: &str| DbError::corrupt(name, format!("data block at offset {}: {what}", h.offset));

    let data = &contents[..layout.keys_end];
    if data.is_empty() {
        return Ok(Seek::NextBlock);
    }
    let footer = u32::from_le_bytes(
        contents[contents.len() - 4..]
            .try_into()
            .map_err(|_| corrupt("no footer"))?,
    );
    let num_restarts = (footer & !FOOTER_FLAGS) as usize;
    let restart = |i: usize| -> Result<usize, DbError> {
        let at = layout.values_end + 4 * i;
        contents
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .filter(|&p| p < data.len())
            .ok_or_else(|| corrupt("restart point out of bounds"))
    };
    // The user key at restart point `i` (its entry shares nothing).
    let restart_key = |i: usize| -> Result<&[u8], DbError> {
        let pos = restart(i)?;
        let (shared, non_shared, _, start) =
            entry_header(data, pos).ok_or_else(|| corrupt("bad entry at a restart point"))?;
        if shared != 0 || non_shared < key::INTERNAL_FOOTER_LEN {
            return Err(corrupt("bad key at a restart point"));
        }
        data.get(start..start + non_shared - key::INTERNAL_FOOTER_LEN)
            .ok_or_else(|| corrupt("key runs past the end of the entries"))
    };
    // The last restart point whose key is before the key (else the first).
    let (mut lo, mut hi) = (0, num_restarts);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if compare_user(c, restart_key(mid)?, user_key) == Some(Ordering::Less) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let mut pos = restart(lo)?;
    let mut buf: Vec<u8> = Vec::with_capacity(64);
    let mut first = true;
    while pos < data.len() {
        let (shared, non_shared, value_len, start) =
            entry_header(data, pos).ok_or_else(|| corrupt("bad entry header"))?;
        if shared > buf.len() || (first && shared != 0) {
            return Err(corrupt("key shares more bytes than the previous key has"));
        }
        first = false;
        let key_end = start
            .checked_add(non_shared)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| corrupt("key runs past the end of the entries"))?;
        pos = key_end
            .checked_add(value_len)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| corrupt("value runs past the end of the block"))?;
        buf.truncate(shared);
        buf.extend_from_slice(&data[start..key_end]);
        if buf.len() < key::INTERNAL_FOOTER_LEN {
            return Err(corrupt("a key shorter than an internal key"));
        }
        let (user, footer) = key::split_internal(&buf);
        if p.take(user, footer, &data[key_end..pos], out)? == Seek::Done {
            return Ok(Seek::Done);
        }
    }
    Ok(Seek::NextBlock)
}

/// [`seek_block`] for any data block: every entry decoded (blocks whose
/// values are stored apart go through [`KeyWalk`]).
fn walk_block(
    sst: &SstFile,
    contents: &[u8],
    h: BlockHandle,
    p: Probe<'_>,
    out: &mut Vec<(u64, EntryKind, BlobRef)>,
) -> Result<Seek, DbError> {
    let mut seek = Seek::NextBlock;
    let mut bad_kind = None;
    KeyWalk::default()
        .block(contents, h, sst.restart_interval(), |e| {
            if seek == Seek::Done {
                return Ok(());
            }
            let (user, footer) = e.split();
            seek = p.take(user, footer, e.value, out).unwrap_or_else(|error| {
                bad_kind = Some(error);
                Seek::Done
            });
            Ok(())
        })
        .map_err(|error| DbError::Sst {
            file: p.name.to_string(),
            error,
        })?;
    match bad_kind {
        Some(error) => Err(error),
        None => Ok(seek),
    }
}

impl OpenFile {
    /// Appends to `out` the file's entries of `user_key`, newest first, up
    /// to and including the first that is not a merge operand (none: the
    /// file does not hold the key); sequence numbers are the file's global
    /// one if it has one. `g` is the file's index in [`Db::files`], its
    /// blocks' key in `blocks`.
    fn lookup(
        &mut self,
        g: usize,
        user_key: &[u8],
        c: Comparator,
        blocks: &mut BlockCache,
        name: &str,
        out: &mut Vec<(u64, EntryKind, BlobRef)>,
    ) -> Result<(), DbError> {
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
        }
        let index = self.index.as_deref().unwrap_or_default();
        let mut b = index.partition_point(|(s, _)| compare_user(c, s, user_key) == Some(Ordering::Less));
        while let Some(&(_, h)) = index.get(b) {
            let contents = blocks.get(&self.sst, g, b, h, name)?;
            let layout = Layout::of(contents, &BlockKind::Data, h.offset).map_err(|error| DbError::Sst {
                file: name.to_string(),
                error,
            })?;
            let probe = Probe {
                user_key,
                c,
                global_seqno: self.global_seqno,
                name,
            };
            let seek = if layout.values_section.is_some() {
                walk_block(&self.sst, contents, h, probe, out)?
            } else {
                seek_block(contents, layout, h, probe, out)?
            };
            if seek == Seek::Done {
                return Ok(());
            }
            b += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data block of `entries` (internal keys, in order), a restart
    /// point every `interval` entries, values of one byte.
    fn block(entries: &[Vec<u8>], interval: usize) -> Vec<u8> {
        let mut b = Vec::new();
        let mut restarts = Vec::new();
        let mut prev: &[u8] = &[];
        for (i, k) in entries.iter().enumerate() {
            let shared = if i % interval == 0 {
                restarts.push(b.len() as u32);
                0
            } else {
                prev.iter().zip(k).take_while(|(a, b)| a == b).count()
            };
            b.extend([shared as u8, (k.len() - shared) as u8, 1]);
            b.extend_from_slice(&k[shared..]);
            b.push(b'v');
            prev = k;
        }
        for r in &restarts {
            b.extend(r.to_le_bytes());
        }
        b.extend((restarts.len() as u32).to_le_bytes());
        b
    }

    fn ikey(user: &str, seq: u64, kind: u8) -> Vec<u8> {
        [user.as_bytes(), &(seq << 8 | u64::from(kind)).to_le_bytes()].concat()
    }

    #[test]
    fn seeking_by_restart_point_finds_what_a_scan_finds() {
        // Runs of one key (merge operands over a value or a deletion)
        // across restart points, and keys sharing prefixes.
        let mut entries = Vec::new();
        for (i, user) in ["a", "ab", "abc", "abd", "b", "ba", "c", "cc", "d"]
            .iter()
            .enumerate()
        {
            let i = i as u64;
            let run = (i % 4) as usize;
            for m in 0..run {
                entries.push(ikey(user, 100 - m as u64, 2));
            }
            entries.push(ikey(user, 50, if i.is_multiple_of(3) { 0 } else { 1 }));
            entries.push(ikey(user, 10, 1));
        }
        let c = Comparator::from_name(None);
        for interval in [1, 2, 3, 16] {
            let contents = block(&entries, interval);
            let h = BlockHandle::new(0, contents.len() as u64);
            let layout = Layout::of(&contents, &BlockKind::Data, 0).unwrap();
            for probe in [
                "", "a", "aa", "ab", "abc", "abcd", "abd", "b", "ba", "bb", "c", "cc", "d", "e",
            ] {
                // The naive answer: the entries of the key, newest first, up
                // to the first that is not a merge operand.
                let mut want = Vec::new();
                let mut done = false;
                for e in &entries {
                    let (user, footer) = key::split_internal(e);
                    if user != probe.as_bytes() || done {
                        continue;
                    }
                    let kind = entry_kind((footer & 0xff) as u8).unwrap();
                    want.push((footer >> 8, kind, BlobRef::None));
                    done = kind != EntryKind::Merge;
                }
                let want_seek = if done || probe > "d" {
                    Seek::NextBlock
                } else {
                    Seek::Done
                };
                let p = Probe {
                    user_key: probe.as_bytes(),
                    c,
                    global_seqno: None,
                    name: "test",
                };
                let mut got = Vec::new();
                let seek = seek_block(&contents, layout, h, p, &mut got).unwrap();
                assert_eq!(got, want, "interval {interval}, key {probe:?}");
                if !done {
                    assert_eq!(seek, want_seek, "interval {interval}, key {probe:?}");
                } else {
                    assert_eq!(seek, Seek::Done, "interval {interval}, key {probe:?}");
                }
            }
        }
    }

    #[test]
    fn a_restart_point_out_of_bounds_is_an_error() {
        let entries = vec![ikey("a", 1, 1), ikey("b", 1, 1)];
        let mut contents = block(&entries, 1);
        // The second restart point, past the entries.
        let at = contents.len() - 8;
        contents[at..at + 4].copy_from_slice(&1000u32.to_le_bytes());
        let layout = Layout::of(&contents, &BlockKind::Data, 0).unwrap();
        let p = Probe {
            user_key: b"b",
            c: Comparator::from_name(None),
            global_seqno: None,
            name: "test",
        };
        let e = seek_block(&contents, layout, BlockHandle::new(0, 1), p, &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("restart point"), "{e}");
    }
}
