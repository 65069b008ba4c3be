//! Live keys: the internal keys of the memtable and of every live SST file
//! merged in user-key order, each user key decided by its newest entry, as
//! RocksDB's `Get` decides it: the memtable first, then the L0 files newest
//! first, then each level in turn (a key in a higher source is always newer
//! than the same key below it), and within one file the entry with the
//! highest sequence number (the first, in internal-key order).
//!
//! Ported in spirit from RocksDB's `table/merging_iterator.cc` and
//! `db/db_iter.cc` (`FindNextUserEntry`: a deletion hides the older entries
//! of its key).
//!
//! An entry covered by a range deletion of a higher sequence number (from
//! any source: [`super::Tombstones`]) is a deletion. Entries of an ingested
//! file take its global sequence number.
//!
//! Memory: one data block per source (the keys of the block being read),
//! plus the memtable; the sources share [`READAHEAD_BUDGET`] bytes of
//! read-ahead. Each file's walk charges its data blocks and keys to
//! the budgets of [`crate::SstFile::for_each_data_key`], so the time is
//! linear in the files' sizes whatever their bytes. Keys out of internal-key
//! order in a file, or files of one level that overlap, are an error (the
//! merge would otherwise miss a deletion).

use super::blocks::{self, DataBlocks};
use super::data_keys::{Entry, KeyWalk};
use super::error::DbError;
use super::range_del::Tombstones;
use super::wal::EntryKind;
use super::{Db, LiveFile};
use crate::budget::ReadBudget;
use crate::error::{BlockKind, Error};
use crate::key::{self, Comparator};
use crate::table::SstFile;
use core::cmp::Ordering;

/// The read-ahead shared by the sources of one live-key walk.
pub const READAHEAD_BUDGET: u64 = 16 << 20;

/// What an internal key's type byte says about its user key.
#[inline]
pub fn entry_kind(value_type: u8) -> Result<EntryKind, String> {
    match value_type {
        // Value, blob index, wide-column entity, value with preferred seqno.
        0x1 | 0x11 | 0x16 | 0x18 => Ok(EntryKind::Value),
        0x2 => Ok(EntryKind::Merge),
        // Deletion, single deletion, deletion with timestamp.
        0x0 | 0x7 | 0x14 => Ok(EntryKind::Deletion),
        t => Err(format!("an entry of value type {t:#x} in a data block")),
    }
}

/// The entries of one data block: user keys back to back, with (end, kind).
#[derive(Debug, Default)]
struct BlockKeys {
    bytes: Vec<u8>,
    entries: Vec<(usize, u64)>,
    next: usize,
}

/// A pull cursor over the internal keys of one SST file.
pub(crate) struct FileCursor {
    name: String,
    sst: SstFile,
    blocks: DataBlocks,
    walk: KeyWalk,
    keys: BlockKeys,
    data_budget: ReadBudget,
    key_budget: ReadBudget,
    reverse: bool,
    previous_footer: u64,
    interval: u32,
    /// The sequence number of every entry (an ingested file's).
    global_seqno: Option<u64>,
}

impl FileCursor {
    pub(crate) fn open(
        sst: SstFile,
        name: String,
        comparator: Comparator,
        global_seqno: Option<u64>,
        readahead: u64,
    ) -> Result<Self, DbError> {
        let blocks = DataBlocks::with_readahead(&sst, readahead).map_err(|error| DbError::Sst {
            file: name.clone(),
            error,
        })?;
        let len = sst.file_len();
        let raw = sst.properties().raw_key_size().unwrap_or(0);
        let mut c = Self {
            name,
            blocks,
            walk: KeyWalk::default(),
            keys: BlockKeys::default(),
            data_budget: ReadBudget::for_data(len),
            key_budget: ReadBudget::for_data_keys(len, raw),
            reverse: comparator.user == key::UserComparator::ReverseBytewise,
            previous_footer: 0,
            interval: sst.restart_interval(),
            global_seqno,
            sst,
        };
        c.fill()?;
        Ok(c)
    }

    /// Loads blocks until one has entries (or none are left).
    fn fill(&mut self) -> Result<(), DbError> {
        while self.keys.next >= self.keys.entries.len() {
            match self.load() {
                Ok(true) => {}
                Ok(false) => break,
                Err(error) => {
                    return Err(DbError::Sst {
                        file: self.name.clone(),
                        error,
                    })
                }
            }
        }
        Ok(())
    }

    /// Loads the next block's keys; `false` when none is left.
    fn load(&mut self) -> Result<bool, Error> {
        let Some((h, contents)) = self.blocks.next(&self.sst, &mut self.data_budget)? else {
            return Ok(false);
        };
        self.keys.bytes.clear();
        self.keys.entries.clear();
        self.keys.next = 0;
        let (keys, key_budget, reverse, previous_footer) = (
            &mut self.keys,
            &mut self.key_budget,
            self.reverse,
            &mut self.previous_footer,
        );
        self.walk.block(contents, h, self.interval, |e| {
            key_budget.charge(e.ikey.len() as u64, &BlockKind::Data, h.offset)?;
            let (user, footer) = e.split();
            check_order(e, reverse, footer, previous_footer)?;
            keys.bytes.extend_from_slice(user);
            keys.entries.push((keys.bytes.len(), footer));
            Ok(())
        })?;
        Ok(true)
    }

    /// The current entry: user key and (seq << 8 | type).
    pub(crate) fn current(&self) -> Option<(&[u8], u64)> {
        let i = self.keys.next;
        let &(end, footer) = self.keys.entries.get(i)?;
        let start = if i == 0 { 0 } else { self.keys.entries[i - 1].0 };
        let footer = match self.global_seqno {
            Some(g) => (g << 8) | (footer & 0xff),
            None => footer,
        };
        Some((&self.keys.bytes[start..end], footer))
    }

    pub(crate) fn advance(&mut self) -> Result<(), DbError> {
        self.keys.next += 1;
        self.fill()
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }
}

/// One source of the merge, in Get order.
pub(crate) enum Source<'m> {
    /// The memtable's entries (key, sequence number, kind), in comparator order.
    Memtable(
        std::vec::IntoIter<(&'m [u8], u64, EntryKind)>,
        Option<(&'m [u8], u64, EntryKind)>,
    ),
    /// An L0 file, or a level's files (opened one at a time, in key order).
    Files {
        db: &'m Db,
        cursor: Option<Box<FileCursor>>,
        rest: std::vec::IntoIter<&'m LiveFile>,
        last_user_key: Option<Vec<u8>>,
        readahead: u64,
    },
}

impl<'m> Source<'m> {
    pub(crate) fn memtable(entries: Vec<(&'m [u8], u64, EntryKind)>) -> Self {
        let mut it = entries.into_iter();
        let first = it.next();
        Source::Memtable(it, first)
    }

    pub(crate) fn files(db: &'m Db, files: Vec<&'m LiveFile>, readahead: u64) -> Result<Self, DbError> {
        let mut s = Source::Files {
            db,
            cursor: None,
            rest: files.into_iter(),
            last_user_key: None,
            readahead,
        };
        s.next_file()?;
        Ok(s)
    }

    /// Opens the level's next non-empty file when the current one is done;
    /// checks that files of a level do not overlap (neighbours may share a
    /// boundary user key: the older entries of it, in the later file, are
    /// skipped).
    fn next_file(&mut self) -> Result<(), DbError> {
        let Source::Files {
            db,
            cursor,
            rest,
            last_user_key,
            readahead,
        } = self
        else {
            return Ok(());
        };
        let comparator = db.comparator();
        while cursor.as_ref().is_none_or(|c| c.current().is_none()) {
            *cursor = None;
            let Some(f) = rest.next() else {
                return Ok(());
            };
            let sst = db.open_file(f)?;
            let g = Db::global_seqno(&sst, f);
            let mut c = FileCursor::open(sst, f.name(), comparator, g, *readahead)?;
            if let Some(last) = last_user_key.as_ref() {
                while c.current().is_some_and(|(first, _)| first == last.as_slice()) {
                    c.advance()?;
                }
                if let Some((first, _)) = c.current() {
                    if comparator.compare_user(last, first) != Some(Ordering::Less) {
                        return Err(DbError::corrupt(
                            c.name(),
                            "it overlaps the previous file of its level",
                        ));
                    }
                }
            }
            *cursor = Some(Box::new(c));
        }
        Ok(())
    }

    /// The current entry: user key, sequence number, kind.
    pub(crate) fn current(&self) -> Option<(&[u8], u64, Result<EntryKind, String>)> {
        match self {
            Source::Memtable(_, cur) => cur.map(|(k, s, t)| (k, s, Ok(t))),
            Source::Files { cursor, .. } => {
                let (k, footer) = cursor.as_ref()?.current()?;
                Some((k, footer >> 8, entry_kind((footer & 0xff) as u8)))
            }
        }
    }

    /// Moves past every entry of `user_key`.
    pub(crate) fn skip(&mut self, user_key: &[u8]) -> Result<(), DbError> {
        match self {
            Source::Memtable(rest, cur) => {
                if cur.is_some_and(|(k, _, _)| k == user_key) {
                    *cur = rest.next();
                }
                Ok(())
            }
            Source::Files {
                cursor,
                last_user_key,
                ..
            } => {
                let Some(c) = cursor.as_mut() else {
                    return Ok(());
                };
                while c.current().is_some_and(|(k, _)| k == user_key) {
                    c.advance()?;
                }
                if c.current().is_some() {
                    return Ok(());
                }
                *last_user_key = Some(user_key.to_vec());
                self.next_file()
            }
        }
    }
}

/// Merges `sources` (Get order: newest first) and calls `f` with each live
/// user key in comparator order; returns (live keys, deleted keys seen).
/// A key's newest entry is deleted when `tombstones` cover it with a higher
/// sequence number.
pub(crate) fn merge(
    mut sources: Vec<Source<'_>>,
    comparator: Comparator,
    tombstones: &Tombstones,
    mut f: impl FnMut(&[u8]),
) -> Result<(u64, u64), DbError> {
    let mut key = Vec::new();
    let (mut live, mut deleted) = (0u64, 0u64);
    loop {
        // The smallest current user key; on ties the newest source.
        let mut best: Option<usize> = None;
        for (i, s) in sources.iter().enumerate() {
            let Some((k, _, _)) = s.current() else { continue };
            let better = match best.and_then(|b| sources[b].current()) {
                None => true,
                Some((bk, _, _)) => comparator.compare_user(k, bk) == Some(Ordering::Less),
            };
            if better {
                best = Some(i);
            }
        }
        let Some(b) = best else {
            return Ok((live, deleted));
        };
        let (k, seq, kind) = sources[b]
            .current()
            .ok_or_else(|| DbError::unsupported("merge lost its source"))?;
        let kind = kind.map_err(|w| DbError::unsupported(format!("{w}: not supported")))?;
        key.clear();
        key.extend_from_slice(k);
        if kind.is_live() && tombstones.max_covering(&key, comparator) <= seq {
            live += 1;
            f(&key);
        } else {
            deleted += 1;
        }
        for s in sources.iter_mut() {
            s.skip(&key)?;
        }
    }
}

/// Checks the order of entry `e` (footer `footer`) after the previous one
/// of its file (footer `*previous_footer`, updated): user keys ascending in
/// the comparator's order (descending bytewise when `reverse`), entries of
/// one user key in descending sequence order. Returns whether `e` starts a
/// new user key.
#[inline]
fn check_order(e: &Entry<'_>, reverse: bool, footer: u64, previous_footer: &mut u64) -> Result<bool, Error> {
    let order = match e.order {
        None => Ordering::Less,
        Some(o) if reverse => o.reverse(),
        Some(o) => o,
    };
    match order {
        // Older entries of the same key follow the newest.
        Ordering::Equal => {
            if footer >= *previous_footer {
                return Err(e.bad("entries of one key out of sequence order"));
            }
            *previous_footer = footer;
            Ok(false)
        }
        Ordering::Greater => Err(e.bad("user keys out of order")),
        Ordering::Less => {
            *previous_footer = footer;
            Ok(true)
        }
    }
}

/// Calls `f` with each user key of one SST file whose newest entry in the
/// file is not a deletion nor covered by a newer range deletion of the
/// file, in key order; returns how many. The keys of a
/// single file are its view alone: a deletion in a newer file of the same
/// database is not seen (use [`super::Db::for_each_live_key`] for that).
pub fn for_each_file_key(sst: &SstFile, mut f: impl FnMut(&[u8])) -> Result<u64, Error> {
    let comparator = sst.comparator();
    if !comparator.is_known() || comparator.timestamp_size != 0 {
        return Err(Error::Unsupported {
            what: "only tables of the bytewise and reverse bytewise comparators (without timestamps) are read key by key".into(),
        });
    }
    let mut tombstones = Vec::new();
    super::range_del::read_sst_tombstones(sst, None, "the table", &mut tombstones)
        .map_err(|e| Error::Unsupported { what: e.to_string() })?;
    let tombstones = Tombstones::new(&tombstones, comparator);
    let reverse = comparator.user == key::UserComparator::ReverseBytewise;
    let interval = sst.restart_interval();
    let mut data_budget = ReadBudget::for_data(sst.file_len());
    // Key bytes handed out, charged to the walk's key budget
    // (`SstFile::for_each_data_key`'s) a block at a time, but checked per
    // key so that a block of ever longer shared keys stops at the limit.
    let mut key_budget =
        ReadBudget::for_data_keys(sst.file_len(), sst.properties().raw_key_size().unwrap_or(0));
    let key_limit = key_budget.remaining();
    let mut key_bytes = 0u64;
    let mut previous_footer = 0u64;
    let mut count = 0u64;
    let mut walk = KeyWalk::default();
    blocks::for_each_data_block(sst, &mut data_budget, |h, contents| {
        let block_start = key_bytes;
        walk.block(contents, h, interval, |e| {
            key_bytes += e.ikey.len() as u64;
            if key_bytes > key_limit {
                key_budget.charge(key_bytes - block_start, &BlockKind::Data, h.offset)?;
            }
            let (user, footer) = e.split();
            if !check_order(e, reverse, footer, &mut previous_footer)? {
                return Ok(());
            }
            match entry_kind((footer & 0xff) as u8) {
                Ok(kind) if kind.is_live() && tombstones.max_covering(user, comparator) <= footer >> 8 => {
                    count += 1;
                    f(user);
                }
                Ok(_) => {}
                Err(what) => return Err(e.bad(&what)),
            }
            Ok(())
        })?;
        key_budget.charge(key_bytes - block_start, &BlockKind::Data, h.offset)
    })?;
    Ok(count)
}
