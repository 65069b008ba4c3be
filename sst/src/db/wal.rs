//! Unflushed writes: the WriteBatches of the WAL files RocksDB has not yet
//! flushed to SST files, replayed into a memtable of the newest entry per
//! user key.
//!
//! Ported from RocksDB's `db/write_batch.cc` (`ReadRecordFromWriteBatch`,
//! `WriteBatchInternal::Iterate`: a 12-byte header of sequence number and
//! count, then tagged records, the column-family variants carrying a
//! varint32 column family id first) and `db/db_impl/db_impl_open.cc`
//! (`RecoverLogFiles`: the WALs numbered at or above a column family's log
//! number are replayed in number order, up to the first corrupt record
//! under the default `kPointInTimeRecovery`).
//!
//! A record too short for a WriteBatch header, or whose sequence numbers
//! run past RocksDB's largest (2^56 - 1), is a corrupt record, as RocksDB's
//! `DBImpl::ProcessLogRecord` reports it: the replay ends there as the
//! recovery mode says (`bad_header`).
//!
//! Range deletions (`DeleteRange`) are kept as tombstones
//! ([`Memtable::tombstones`]); like every record they take a sequence
//! number, whichever column family they are for. What this reader refuses
//! rather than guess: compressed WALs and the markers of two-phase commit
//! (prepared transactions are not yet part of the database). Merge operands
//! make a key present (a merge on no value still gives a value), but a
//! `Get` goes on past them ([`MemEntry::ends_search`]). Timestamped keys
//! (user-defined timestamps) are refused by [`super::Db`].

use super::blob::{self, BlobRef};
use super::error::DbError;
use super::log::{LogEnd, LogReader, MetaRecord, Record};
use super::range_del::Tombstone;
use crate::coding::Reader;
use crate::key::MAX_SEQUENCE_NUMBER;
use std::collections::BTreeMap;
use std::path::Path;

/// What the newest write of a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A value (put, merge, blob index, wide-column entity): the key is present.
    Value,
    /// A deletion (delete, single delete): the key is absent.
    Deletion,
    /// A merge operand: the key is present (a merge on no value still
    /// gives a value), and a `Get` goes on to older entries.
    Merge,
}

impl EntryKind {
    /// Whether the key is present after this write.
    pub fn is_live(self) -> bool {
        self != EntryKind::Deletion
    }
}

/// The unflushed writes of one user key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemEntry {
    /// The newest write's sequence number.
    pub seq: u64,
    /// What the newest write did.
    pub kind: EntryKind,
    /// Whether a `Get` ends in the memtable: some write of the key is not a
    /// merge operand (a value or deletion under the operands ends it).
    pub ends_search: bool,
    /// What the newest write's value refers to, when it is a blob index
    /// (a `Get` ending here reads the blob).
    pub blob: BlobRef,
}

/// The newest unflushed write of each user key of one column family.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memtable {
    entries: BTreeMap<Vec<u8>, MemEntry>,
    /// The range deletions of the column family, in WAL order.
    pub tombstones: Vec<Tombstone>,
    /// WAL files replayed (their numbers), in order.
    pub wal_files: Vec<u64>,
    /// Writes replayed for this column family.
    pub writes: u64,
    /// Where a WAL ended early, and why: (file number, how it ended). RocksDB
    /// recovers up to the same point.
    pub cut_short: Vec<(u64, LogEnd)>,
}

impl Memtable {
    /// The newest write of `user_key`: its sequence number and kind.
    pub fn get(&self, user_key: &[u8]) -> Option<(u64, EntryKind)> {
        self.entries.get(user_key).map(|e| (e.seq, e.kind))
    }

    /// Everything about the unflushed writes of `user_key`.
    pub fn entry(&self, user_key: &[u8]) -> Option<MemEntry> {
        self.entries.get(user_key).copied()
    }

    /// The entries in bytewise key order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64, EntryKind)> + '_ {
        self.entries.iter().map(|(k, e)| (k.as_slice(), e.seq, e.kind))
    }

    /// How many distinct keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key was written.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn put(&mut self, key: &[u8], seq: u64, kind: EntryKind, blob: BlobRef) {
        self.writes += 1;
        let ends = kind != EntryKind::Merge;
        match self.entries.get_mut(key) {
            Some(e) => {
                if e.seq <= seq {
                    e.seq = seq;
                    e.kind = kind;
                    e.blob = blob;
                }
                e.ends_search |= ends;
            }
            None => {
                self.entries.insert(
                    key.to_vec(),
                    MemEntry {
                        seq,
                        kind,
                        ends_search: ends,
                        blob,
                    },
                );
            }
        }
    }

    /// Replays one WAL file's bytes (`number`: its file number, `name` in
    /// errors) for column family `cf`.
    pub fn replay(&mut self, data: &[u8], number: u64, cf: u32, name: &str) -> Result<(), DbError> {
        let mut reader = LogReader::new(data, number);
        let mut bad_record = None;
        while let Some(record) = reader.next_record() {
            match record {
                Record::Data(batch) => {
                    // What RocksDB's reporter counts as a corrupt record
                    // (`DBImpl::ProcessLogRecord`), handled as the recovery
                    // mode says like a checksum mismatch: nothing of the
                    // record, nor after it, is replayed.
                    if let Some(what) = bad_header(&batch) {
                        bad_record = Some(LogEnd::Corrupt {
                            offset: reader.record_offset(),
                            what,
                        });
                        break;
                    }
                    self.apply_batch(&batch, cf)
                        .map_err(|w| DbError::corrupt(name, w))?
                }
                Record::Meta(MetaRecord::SetCompression(0)) => {}
                Record::Meta(MetaRecord::SetCompression(c)) => {
                    return Err(DbError::unsupported(format!(
                    "{name}: a compressed WAL (compression type {c}) is not supported; flush the database \
                         (e.g. `ldb flush` or DB::Flush) and try again"
                )))
                }
                Record::Meta(_) => {}
            }
        }
        self.wal_files.push(number);
        match bad_record.as_ref().or(reader.end()) {
            Some(LogEnd::Clean) | None => {}
            Some(end) => self.cut_short.push((number, end.clone())),
        }
        Ok(())
    }

    /// Applies one WriteBatch.
    fn apply_batch(&mut self, batch: &[u8], cf: u32) -> Result<(), String> {
        let mut r = Reader::new(batch);
        let first_seq = r.fixed64().ok_or("a WriteBatch shorter than its header")?;
        let count = r.fixed32().ok_or("a WriteBatch shorter than its header")?;
        let mut seen = 0u32;
        let mut seq = first_seq;
        let bad = |what: &str| format!("WriteBatch at sequence {first_seq}: {what}");
        while !r.is_empty() {
            let tag = r.bytes(1).ok_or_else(|| bad("truncated"))?[0];
            let family = match tag {
                0x4..=0x6 | 0x8 | 0xE | 0x10 | 0x17 | 0x19 => {
                    r.varint32().ok_or_else(|| bad("bad column family"))?
                }
                _ => 0,
            };
            let mut lp = |what: &str| r.length_prefixed().ok_or_else(|| bad(what));
            let kind = match tag {
                // Value, blob index, wide-column entity, value with
                // preferred seqno (and their column-family forms).
                0x1 | 0x5 | 0x11 | 0x10 | 0x16 | 0x17 | 0x18 | 0x19 => {
                    let key = lp("bad key")?;
                    let value = lp("bad value")?;
                    // Blob index (and its column-family form).
                    let blob = if matches!(tag, 0x11 | 0x10) {
                        blob::decode(value)
                    } else {
                        BlobRef::None
                    };
                    Some(Some((key, EntryKind::Value, blob)))
                }
                // Merge (and its column-family form).
                0x2 | 0x6 => {
                    let key = lp("bad key")?;
                    lp("bad value")?;
                    Some(Some((key, EntryKind::Merge, BlobRef::None)))
                }
                // Deletion, single deletion (and column-family forms).
                0x0 | 0x4 | 0x7 | 0x8 => Some(Some((lp("bad key")?, EntryKind::Deletion, BlobRef::None))),
                // Range deletion: a record of its own (it takes a sequence
                // number, whatever its column family).
                0xF | 0xE => {
                    let start = lp("bad range start")?;
                    let end = lp("bad range end")?;
                    if family == cf {
                        if self.tombstones.len() >= super::range_del::MAX_TOMBSTONES {
                            return Err(format!(
                                "more than {} range deletions: not read (the reader's bound)",
                                super::range_del::MAX_TOMBSTONES
                            ));
                        }
                        self.writes += 1;
                        self.tombstones.push(Tombstone {
                            start: start.to_vec(),
                            end: end.to_vec(),
                            seq,
                        });
                    }
                    Some(None)
                }
                // Log data: not a write.
                0x3 => {
                    lp("bad log data")?;
                    None
                }
                0xD => None,
                0x9 | 0xA | 0xB | 0xC | 0x12 | 0x13 | 0x15 => {
                    return Err(
                        "two-phase commit markers (transactions) in the WAL are not supported; commit and flush first"
                            .into(),
                    )
                }
                t => return Err(format!("unknown WriteBatch record type {t:#x}")),
            };
            if let Some(write) = kind {
                seen += 1;
                if let Some((key, kind, blob)) = write.filter(|_| family == cf) {
                    self.put(key, seq, kind, blob);
                }
                seq = seq.wrapping_add(1);
            }
        }
        if seen != count {
            return Err(format!("WriteBatch says {count} records, holds {seen}"));
        }
        Ok(())
    }
}

/// Why a WriteBatch record is corrupt by its header alone: shorter than
/// the header ("log record too small"), or sequence numbers past RocksDB's
/// largest, [`MAX_SEQUENCE_NUMBER`] (2^56 - 1): RocksDB reports a batch
/// whose first sequence number is past it ("sequence N is too large");
/// one whose records would run past it would take numbers that do not fit
/// an internal key (a deletion wrapping to 0 would lose to an older put),
/// refused the same way.
pub(crate) fn bad_header(batch: &[u8]) -> Option<&'static str> {
    let mut r = Reader::new(batch);
    let (Some(first), Some(count)) = (r.fixed64(), r.fixed32()) else {
        return Some("a WriteBatch shorter than its 12-byte header");
    };
    if first > MAX_SEQUENCE_NUMBER {
        return Some("a WriteBatch whose sequence number is past RocksDB's largest (2^56 - 1)");
    }
    if count > 0 && first + u64::from(count) - 1 > MAX_SEQUENCE_NUMBER {
        return Some("a WriteBatch whose records' sequence numbers run past RocksDB's largest (2^56 - 1)");
    }
    None
}

/// The WAL files (`NNNNNN.log`) in `dir` numbered at least `min`, in number
/// order.
pub fn wal_files(dir: &Path, min: u64) -> Result<Vec<(u64, std::path::PathBuf)>, DbError> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| DbError::io(dir, &e))? {
        let entry = entry.map_err(|e| DbError::io(dir, &e))?;
        let name = entry.file_name();
        let Some(number) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".log"))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        if number >= min {
            out.push((number, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::put_varint64;

    pub(crate) fn batch(seq: u64, records: &[(u8, &[u8])]) -> Vec<u8> {
        let mut b = seq.to_le_bytes().to_vec();
        b.extend((records.len() as u32).to_le_bytes());
        for (tag, key) in records {
            b.push(*tag);
            put_varint64(&mut b, key.len() as u64);
            b.extend_from_slice(key);
            if *tag == 1 {
                put_varint64(&mut b, 1);
                b.push(b'v');
            }
        }
        b
    }

    #[test]
    fn newest_write_wins() {
        let log = super::super::log::write_log(&[
            &batch(10, &[(1, b"a"), (1, b"b")]),
            &batch(12, &[(0, b"a"), (1, b"c")]),
        ]);
        let mut m = Memtable::default();
        m.replay(&log, 5, 0, "5.log").unwrap();
        assert_eq!(m.get(b"a"), Some((12, EntryKind::Deletion)));
        assert_eq!(m.get(b"b"), Some((11, EntryKind::Value)));
        assert_eq!(m.get(b"c"), Some((13, EntryKind::Value)));
        // A count that disagrees, an unknown tag: corruption.
        let mut bad = batch(1, &[(1, b"a")]);
        bad[8] = 2;
        let log = super::super::log::write_log(&[&bad]);
        assert!(Memtable::default().replay(&log, 5, 0, "5.log").is_err());
        let log = super::super::log::write_log(&[&batch(1, &[(0x30, b"a")])]);
        assert!(Memtable::default().replay(&log, 5, 0, "5.log").is_err());
    }
}
