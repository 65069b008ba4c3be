//! The typed errors and their one-line messages, on damaged copies of a
//! real format_version 5 file (whose footer holds varint block handles).

use ribbon_sst::coding::put_varint64;
use ribbon_sst::{BlockKind, Error, SstFile};
use std::path::PathBuf;

fn fv5() -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/full_bloom_fv5_snappy_crc32c.sst");
    std::fs::read(p).unwrap()
}

/// The file with its footer's metaindex handle replaced by `part2` (then
/// zero padding to 40 bytes).
fn with_footer_handles(part2: &[u8]) -> Vec<u8> {
    let mut b = fv5();
    let start = b.len() - 53 + 1;
    b[start..start + 40].fill(0);
    b[start..start + part2.len().min(40)].copy_from_slice(&part2[..part2.len().min(40)]);
    b
}

fn handle(offset: u64, size: u64) -> Vec<u8> {
    let mut v = Vec::new();
    put_varint64(&mut v, offset);
    put_varint64(&mut v, size);
    v
}

fn open(b: Vec<u8>) -> Error {
    SstFile::from_bytes(b).unwrap_err()
}

#[test]
fn handle_errors_name_the_block() {
    let len = fv5().len() as u64;
    let e = open(with_footer_handles(&handle(1 << 40, 10)));
    assert!(
        matches!(
            e,
            Error::OversizedHandle {
                block: BlockKind::Metaindex,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string().starts_with("oversized handle for metaindex block"),
        "{e}"
    );

    let e = open(with_footer_handles(&handle(len - 60, 100)));
    assert!(
        matches!(
            e,
            Error::Truncated {
                block: BlockKind::Metaindex,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("truncated file: metaindex block at offset"),
        "{e}"
    );

    let e = open(with_footer_handles(&[0xff; 40]));
    assert!(
        matches!(
            e,
            Error::BadVarint {
                block: BlockKind::Footer,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("bad varint (metaindex handle) in footer"),
        "{e}"
    );

    // A handle to the wrong place: its checksum does not match.
    let e = open(with_footer_handles(&handle(0, 100)));
    assert!(e.is_checksum_mismatch(), "{e:?}");
    assert_eq!(e.block(), Some(&BlockKind::Metaindex));
    assert!(
        e.to_string()
            .starts_with("checksum mismatch in metaindex block at offset 0 (kCRC32c: stored "),
        "{e}"
    );
}

#[test]
fn file_level_errors() {
    let b = fv5();
    assert_eq!(open(Vec::new()), Error::Empty);
    assert_eq!(open(b[..40].to_vec()), Error::TooShort { len: 40 });
    assert!(matches!(open(b[..b.len() - 1].to_vec()), Error::BadMagic { .. }));
    let mut bad_fv = b.clone();
    let n = bad_fv.len();
    bad_fv[n - 12] = 99;
    assert_eq!(open(bad_fv), Error::UnsupportedFormatVersion { version: 99 });
    let mut bad_ck = b.clone();
    bad_ck[n - 53] = 9;
    assert_eq!(open(bad_ck), Error::UnsupportedChecksumType { byte: 9 });
    for e in [
        Error::Empty,
        Error::TooShort { len: 3 },
        Error::PlainTable,
        Error::CuckooTable,
        Error::BadMagic { magic: 1 },
    ] {
        let msg = e.to_string();
        assert!(!msg.contains('\n') && !msg.is_empty());
    }
    assert!(Error::PlainTable.to_string().contains("plain-table"));
    assert!(Error::CuckooTable.to_string().contains("cuckoo-table"));
    let e = SstFile::open("/nonexistent/x.sst").unwrap_err();
    assert!(
        e.to_string().starts_with("cannot read /nonexistent/x.sst: "),
        "{e}"
    );
}

#[test]
fn corrupt_data_blocks_are_found_by_verify() {
    let b = fv5();
    let sst = SstFile::from_bytes(b.clone()).unwrap();
    let data = sst.data_block_handles().unwrap();
    let h = data[data.len() / 2];
    let mut bad = b;
    bad[(h.offset + h.size / 2) as usize] ^= 0x40;
    // Opening reads no data block; verification does.
    let sst = SstFile::from_bytes(bad).unwrap();
    let e = sst.verify_filter().unwrap_err();
    assert_eq!(e.block(), Some(&BlockKind::Data));
    assert_eq!(
        e.to_string().split(" (").next().unwrap(),
        format!("checksum mismatch in data block at offset {}", h.offset)
    );
    assert!(sst.verify_checksums().unwrap_err().is_checksum_mismatch());
}

/// A FIFO, a directory or a device given as an SST file is refused in one
/// line, before anything is read: opening a FIFO for reading would block
/// until a writer came (issue #31).
#[test]
fn non_regular_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("table.sst");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo");
    for path in [fifo, dir.path().to_path_buf(), PathBuf::from("/dev/null")] {
        let (tx, rx) = std::sync::mpsc::channel();
        let shown = path.display().to_string();
        std::thread::spawn(move || tx.send(SstFile::open(&path).map(|_| ()).unwrap_err()).unwrap());
        let e = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("{shown}: the open blocked"));
        let text = e.to_string();
        assert!(
            text.contains("not a regular file") && text.contains(&shown) && !text.contains('\n'),
            "{text}"
        );
    }
}
