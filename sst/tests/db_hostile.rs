//! The DB-directory reader on hostile input: MANIFESTs, WALs and `CURRENT`
//! files with every byte flipped, truncated anywhere, or full of random
//! bytes give an answer or a one-line error, never a panic, and a
//! database whose files are damaged is refused rather than read wrong.

use ribbon_sst::coding::put_varint64;
use ribbon_sst::db::log::write_log;
use ribbon_sst::db::{Db, Memtable, Version};
use std::path::Path;

fn lp(out: &mut Vec<u8>, b: &[u8]) {
    put_varint64(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn ikey(user: &[u8], seq: u64) -> Vec<u8> {
    let mut k = user.to_vec();
    k.extend(((seq << 8) | 1).to_le_bytes());
    k
}

fn manifest() -> Vec<u8> {
    let mut first = Vec::new();
    put_varint64(&mut first, 1);
    lp(&mut first, b"leveldb.BytewiseComparator");
    put_varint64(&mut first, 2);
    put_varint64(&mut first, 4);
    let mut add = Vec::new();
    put_varint64(&mut add, 103);
    put_varint64(&mut add, 1);
    put_varint64(&mut add, 9);
    put_varint64(&mut add, 4096);
    lp(&mut add, &ikey(b"a", 1));
    lp(&mut add, &ikey(b"z", 2));
    put_varint64(&mut add, 1);
    put_varint64(&mut add, 2);
    put_varint64(&mut add, 1);
    let mut cf = Vec::new();
    put_varint64(&mut cf, 200);
    put_varint64(&mut cf, 1);
    put_varint64(&mut cf, 201);
    lp(&mut cf, b"other");
    write_log(&[&first, &add, &cf])
}

fn wal() -> Vec<u8> {
    let mut b = 10u64.to_le_bytes().to_vec();
    b.extend(3u32.to_le_bytes());
    for (tag, key) in [(1u8, &b"k1"[..]), (0, b"k2"), (1, b"k3")] {
        b.push(tag);
        lp(&mut b, key);
        if tag == 1 {
            lp(&mut b, b"value");
        }
    }
    write_log(&[&b, &b])
}

#[test]
fn the_fixtures_read() {
    let v = Version::from_bytes(&manifest(), 3, Path::new("MANIFEST-000003")).unwrap();
    assert_eq!(v.column_families.len(), 2);
    assert_eq!(v.column_family("default").unwrap().files.len(), 1);
    let mut m = Memtable::default();
    m.replay(&wal(), 4, 0, "000004.log").unwrap();
    assert_eq!(m.len(), 3);
    assert_eq!(m.writes, 6);
}

#[test]
fn every_flipped_or_truncated_byte_is_an_error_or_an_answer() {
    for data in [manifest(), wal()] {
        for i in 0..data.len() {
            for bit in [0x01u8, 0x80] {
                let mut d = data.clone();
                d[i] ^= bit;
                let _ = Version::from_bytes(&d, 3, Path::new("M"));
                let mut m = Memtable::default();
                if let Err(e) = m.replay(&d, 4, 0, "W") {
                    assert!(!e.to_string().contains('\n'));
                }
            }
        }
        for n in 0..data.len() {
            let _ = Version::from_bytes(&data[..n], 3, Path::new("M"));
            let _ = Memtable::default().replay(&data[..n], 4, 0, "W");
        }
    }
}

#[test]
fn random_records_never_panic() {
    let mut state = 0x1234_5678u64;
    for _ in 0..3000 {
        let len = (ribbon::core::hash::split_mix64(&mut state) % 300) as usize;
        let body: Vec<u8> = (0..len)
            .map(|_| ribbon::core::hash::split_mix64(&mut state) as u8)
            .collect();
        // Checksummed, so the decoders (not the log reader) see the bytes.
        let log = write_log(&[&body]);
        let _ = Version::from_bytes(&log, 1, Path::new("M"));
        let _ = Memtable::default().replay(&log, 1, 0, "W");
    }
}

#[test]
fn directories_that_are_not_databases_are_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let e = Db::open(tmp.path()).unwrap_err().to_string();
    assert!(e.contains("CURRENT"), "{e}");
    std::fs::write(tmp.path().join("CURRENT"), "../etc/passwd\n").unwrap();
    let e = Db::open(tmp.path()).unwrap_err().to_string();
    assert!(e.contains("not a MANIFEST"), "{e}");
    std::fs::write(tmp.path().join("CURRENT"), "MANIFEST-000003\n").unwrap();
    std::fs::write(tmp.path().join("MANIFEST-000003"), manifest()).unwrap();
    // The MANIFEST names 000009.sst, which is missing: the live-key walk
    // says so rather than report fewer keys.
    let db = Db::open(tmp.path()).unwrap();
    assert_eq!(db.levels()[1].len(), 1);
    let e = db.for_each_live_key(|_| {}).unwrap_err().to_string();
    assert!(e.contains("000009.sst"), "{e}");
    assert_eq!(db.get_path(b"m").len(), 1);
    assert!(db.get_path(b"zz").is_empty());
    // A WAL with a range deletion is refused.
    let mut b = 1u64.to_le_bytes().to_vec();
    b.extend(1u32.to_le_bytes());
    b.push(0xF);
    lp(&mut b, b"a");
    lp(&mut b, b"b");
    std::fs::write(tmp.path().join("000004.log"), write_log(&[&b])).unwrap();
    let e = Db::open(tmp.path()).unwrap_err().to_string();
    assert!(e.contains("range deletion"), "{e}");
}
