//! The database directory's log files: the MANIFEST (`VersionEdit`s,
//! `ribbon_sst::db::Version::from_bytes`) and the WAL (`WriteBatch`es,
//! `ribbon_sst::db::Memtable::replay`). Any bytes are rejected in one line
//! or read without a panic.
//!
//! The input is read twice: as a whole log file (the framing: blocks,
//! fragments, checksums), and as records (each a 2-byte little-endian
//! length, then that many bytes) framed by `write_log` with valid
//! checksums, so that mutations reach the `VersionEdit` and `WriteBatch`
//! parsers behind the framing. The same bytes are also read as a blob index
//! (`ribbon_sst::db::blob::decode`) and as an OPTIONS file's text (its
//! `num_levels`, `compaction_style`, `wal_recovery_mode`).

#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbon_sst::db::blob::{self, BlobRef};
use ribbon_sst::db::log::write_log;
use ribbon_sst::db::{Memtable, OptionsFile, Version};
use std::path::Path;

fn records(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while data.len() >= 2 {
        let len = usize::from(u16::from_le_bytes([data[0], data[1]])).min(data.len() - 2);
        out.push(&data[2..2 + len]);
        data = &data[2 + len..];
    }
    out
}

fn read(log: &[u8]) {
    let _ = Version::from_bytes(log, 1, Path::new("MANIFEST-000001"));
    for cf in [0, 1] {
        let mut m = Memtable::default();
        if m.replay(log, 5, cf, "000005.log").is_ok() {
            // Every entry read is one the batch named.
            assert!(m.len() as u64 <= m.writes);
        }
    }
}

fn other_parsers(data: &[u8]) {
    if let BlobRef::File(n) = blob::decode(data) {
        assert!(n > 0);
    }
    let text = String::from_utf8_lossy(data);
    if let Ok(o) = OptionsFile::parse(&text, Path::new("OPTIONS-000001")) {
        // RocksDB's sanitized num_levels is at least 1.
        assert!(o.num_levels.values().all(|&n| n >= 1));
    }
}

fuzz_target!(|data: &[u8]| {
    other_parsers(data);
    read(data);
    read(&write_log(&records(data)));
});
