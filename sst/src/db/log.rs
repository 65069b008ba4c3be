//! The log format of MANIFEST and WAL files: 32 KiB blocks of physical
//! records (checksum, length, type, and for recycled logs the log number),
//! fragments of the logical records.
//!
//! Ported from RocksDB's `db/log_format.h` and `db/log_reader.cc`
//! (`ReadPhysicalRecord`, `ReadRecord`): a block's last bytes too short for
//! a header are zero padding; a record's checksum is the masked CRC-32C of
//! its type byte (and log number), then its payload; `kZeroType` records of
//! length zero are preallocated space and end the block; records of a
//! recycled log that carry another log number are left-overs of its
//! earlier use and end the log; types 9 to 11 and 130, 131 are metadata
//! records (WAL compression, user-defined timestamp sizes, predecessor WAL
//! information); an unknown type with bit 7 set may be ignored.
//!
//! Where the log ends early — a physical record cut short by the end of
//! the file, a fragmented record with no last fragment, a checksum that
//! does not match — the reader stops there and says why ([`LogEnd`]): a
//! WAL is read up to that point, as RocksDB's default
//! `kPointInTimeRecovery` does; the caller decides whether a MANIFEST may
//! end that way.

use crate::checksum::crc32c_masked;
use crate::coding::fixed32;

/// The block size of the log format.
pub const BLOCK_SIZE: usize = 32768;
const HEADER: usize = 7;
const RECYCLABLE_HEADER: usize = 11;

/// A metadata record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetaRecord {
    /// `kSetCompressionType`: the WAL's compression type byte.
    SetCompression(u32),
    /// `kUserDefinedTimestampSizeType`: column family ids and timestamp sizes.
    TimestampSizes(Vec<u8>),
    /// `kPredecessorWALInfoType`.
    PredecessorWal,
    /// An unknown type RocksDB may ignore (bit 7 set).
    Ignorable(u8),
}

/// One logical record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A record's payload (a VersionEdit, a WriteBatch).
    Data(Vec<u8>),
    /// A metadata record.
    Meta(MetaRecord),
}

/// Why the reader stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEnd {
    /// At the end of the file, after a complete record.
    Clean,
    /// The last bytes were an incomplete record (a write cut short).
    Truncated {
        /// Where the incomplete record starts.
        offset: usize,
    },
    /// A record left over from an earlier use of a recycled log.
    OldRecord {
        /// Where.
        offset: usize,
    },
    /// A corrupt record.
    Corrupt {
        /// Where.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
}

/// Reads the logical records of a log file held in memory.
#[derive(Debug)]
pub struct LogReader<'a> {
    data: &'a [u8],
    pos: usize,
    log_number: u64,
    end: Option<LogEnd>,
    /// Where the last record returned starts (its first fragment).
    record_start: usize,
}

enum Physical<'a> {
    Record(u8, &'a [u8]),
    End(LogEnd),
}

impl<'a> LogReader<'a> {
    /// A reader of `data`, the bytes of log file number `log_number` (the
    /// number recycled records must carry).
    pub fn new(data: &'a [u8], log_number: u64) -> Self {
        Self {
            data,
            pos: 0,
            log_number,
            end: None,
            record_start: 0,
        }
    }

    /// Where the record [`LogReader::next_record`] returned last starts
    /// (the offset of its first fragment's header).
    pub fn record_offset(&self) -> usize {
        self.record_start
    }

    /// Why the reader stopped (after [`LogReader::next_record`] returned
    /// `None`).
    pub fn end(&self) -> Option<&LogEnd> {
        self.end.as_ref()
    }

    fn physical(&mut self) -> Physical<'a> {
        loop {
            let in_block = self.pos % BLOCK_SIZE;
            let block_left = BLOCK_SIZE - in_block;
            if block_left < HEADER {
                self.pos += block_left;
                continue;
            }
            let start = self.pos;
            let rest = &self.data[start.min(self.data.len())..];
            if rest.is_empty() {
                return Physical::End(LogEnd::Clean);
            }
            if rest.len() < HEADER {
                return Physical::End(LogEnd::Truncated { offset: start });
            }
            let length = usize::from(rest[4]) | (usize::from(rest[5]) << 8);
            let kind = rest[6];
            let recyclable = matches!(kind, 5..=8 | 11 | 131);
            let header = if recyclable { RECYCLABLE_HEADER } else { HEADER };
            if header + length > rest.len() {
                return Physical::End(LogEnd::Truncated { offset: start });
            }
            if in_block + header + length > BLOCK_SIZE {
                return Physical::End(LogEnd::Corrupt {
                    offset: start,
                    what: "a record runs past the end of its block",
                });
            }
            if kind == 0 && length == 0 {
                // Preallocated space: the rest of the block is empty.
                self.pos = start + block_left;
                continue;
            }
            if crc32c_masked(&rest[6..header + length]) != fixed32(&rest[..4]) {
                return Physical::End(LogEnd::Corrupt {
                    offset: start,
                    what: "record checksum mismatch",
                });
            }
            if recyclable && u64::from(fixed32(&rest[7..11])) != self.log_number & 0xffff_ffff {
                return Physical::End(LogEnd::OldRecord { offset: start });
            }
            self.pos = start + header + length;
            return Physical::Record(kind, &rest[header..header + length]);
        }
    }

    /// The next logical record; `None` at the end of the log (see
    /// [`LogReader::end`]). Memory: the record's bytes.
    pub fn next_record(&mut self) -> Option<Record> {
        if self.end.is_some() {
            return None;
        }
        let mut assembling: Option<(usize, Vec<u8>)> = None;
        loop {
            let start = self.pos;
            if assembling.is_none() {
                self.record_start = start;
            }
            let (kind, payload) = match self.physical() {
                Physical::Record(k, p) => (k, p),
                Physical::End(end) => {
                    // A fragmented record without its last fragment is cut short.
                    self.end = Some(match (end, assembling) {
                        (LogEnd::Clean, Some((offset, _))) => LogEnd::Truncated { offset },
                        (end, _) => end,
                    });
                    return None;
                }
            };
            let corrupt = |what| LogEnd::Corrupt { offset: start, what };
            match (kind, assembling.as_mut()) {
                (1 | 5, None) => return Some(Record::Data(payload.to_vec())),
                (2 | 6, None) => assembling = Some((start, payload.to_vec())),
                (3 | 7, Some((_, buf))) => buf.extend_from_slice(payload),
                (4 | 8, Some(_)) => {
                    let (_, mut buf) = assembling.take().unwrap_or_default();
                    buf.extend_from_slice(payload);
                    return Some(Record::Data(buf));
                }
                (9, None) if payload.len() >= 4 => {
                    return Some(Record::Meta(MetaRecord::SetCompression(fixed32(payload))))
                }
                (10 | 11, None) => return Some(Record::Meta(MetaRecord::TimestampSizes(payload.to_vec()))),
                (130 | 131, None) => return Some(Record::Meta(MetaRecord::PredecessorWal)),
                (k, None) if k & 0x80 != 0 => return Some(Record::Meta(MetaRecord::Ignorable(k))),
                (1..=11 | 130 | 131, _) => {
                    self.end = Some(corrupt("a record fragment out of sequence"));
                    return None;
                }
                _ => {
                    self.end = Some(corrupt("unknown record type"));
                    return None;
                }
            }
        }
    }
}

/// Writes `records` in the log format (non-recyclable), for tests.
#[doc(hidden)]
pub fn write_log(records: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        let mut rest: &[u8] = r;
        let mut first = true;
        loop {
            let left = BLOCK_SIZE - out.len() % BLOCK_SIZE;
            if left < HEADER {
                out.resize(out.len() + left, 0);
                continue;
            }
            let n = rest.len().min(left - HEADER);
            let last = n == rest.len();
            let kind: u8 = match (first, last) {
                (true, true) => 1,
                (true, false) => 2,
                (false, false) => 3,
                (false, true) => 4,
            };
            let mut body = vec![kind];
            body.extend_from_slice(&rest[..n]);
            out.extend_from_slice(&crc32c_masked(&body).to_le_bytes());
            out.extend_from_slice(&(n as u16).to_le_bytes());
            out.extend_from_slice(&body);
            rest = &rest[n..];
            first = false;
            if last {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(data: &[u8]) -> (Vec<Vec<u8>>, LogEnd) {
        let mut r = LogReader::new(data, 1);
        let mut out = Vec::new();
        while let Some(rec) = r.next_record() {
            if let Record::Data(d) = rec {
                out.push(d);
            }
        }
        (out, r.end().cloned().unwrap())
    }

    #[test]
    fn fragments_across_blocks_round_trip() {
        let big = vec![7u8; 100_000];
        let recs: Vec<&[u8]> = vec![b"a", &big, b"", b"tail"];
        let log = write_log(&recs);
        let (got, end) = read_all(&log);
        assert_eq!(got, recs.iter().map(|r| r.to_vec()).collect::<Vec<_>>());
        assert_eq!(end, LogEnd::Clean);
        // Cut anywhere: a prefix of the records, then a truncated or clean end.
        for cut in [1, 6, 7, 20, 32768, 50_000, log.len() - 1] {
            let (got, end) = read_all(&log[..cut]);
            assert!(got.len() < recs.len());
            assert!(
                matches!(end, LogEnd::Truncated { .. } | LogEnd::Clean),
                "{cut}: {end:?}"
            );
        }
        // A flipped payload byte: a checksum mismatch, nothing after it.
        let mut bad = log.clone();
        bad[7] ^= 1;
        let (got, end) = read_all(&bad);
        assert!(got.is_empty());
        assert!(matches!(end, LogEnd::Corrupt { .. }));
    }
}
