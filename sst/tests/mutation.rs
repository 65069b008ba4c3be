//! Mutation test over real SST files (the corpus in `tests/corpus/`,
//! written by RocksDB 11.8; see `tests/compat_sst.rs` in the root package
//! for the command that regenerates it): flipped, truncated, inserted and
//! overwritten bytes, some with the damaged block's checksum recomputed so
//! the parsers behind the checksum see the damage too. Whatever the bytes,
//! every entry point returns (an error or an answer) and never panics.
//!
//! `RIBBON_SST_MUTATIONS=N` sets the mutations per kind and file (default
//! 300; a tenth of that in debug builds).

use ribbon::test_support::keys::Rng;
use ribbon_sst::checksum::{compute, context_modifier};
use ribbon_sst::{BlockHandle, Footer, SstFile, TableInfo};
use std::path::PathBuf;

/// A value in `0..n` (0 for `n == 0`).
fn below(rng: &mut Rng, n: usize) -> usize {
    rng.below(n as u64) as usize
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    assert!(out.len() >= 5, "corpus missing in {}", dir.display());
    out
}

fn mutations_per_kind() -> usize {
    let default = if cfg!(debug_assertions) { 30 } else { 300 };
    std::env::var("RIBBON_SST_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs every entry point on `bytes`. Returns whether it opened.
fn exercise(bytes: Vec<u8>, probes: &[Vec<u8>]) -> bool {
    let sst = match SstFile::from_bytes(bytes) {
        Ok(s) => s,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            assert!(!e.to_string().contains('\n'));
            return false;
        }
    };
    for k in probes {
        let _ = sst.key_may_match(k);
        let _ = sst.prefix_may_match(k);
    }
    let _ = sst.key_may_match_many(probes);
    let info = TableInfo::new(&sst);
    let _ = info.family();
    let _ = sst.blocks();
    if let Err(e) = sst.verify_checksums() {
        let _ = e.to_string();
    }
    match sst.verify_filter() {
        Ok(r) => {
            let _ = r.miss_count;
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    true
}

/// Recomputes the stored checksum of the block at `h` (block-based table
/// trailer, context included).
fn fix_block(bytes: &mut [u8], footer: &Footer, h: BlockHandle) {
    let start = h.offset as usize;
    let end = start + h.size as usize + 5;
    if end > bytes.len() {
        return;
    }
    let sum = compute(footer.checksum_type, &bytes[start..end - 4])
        .wrapping_add(context_modifier(footer.base_context_checksum, h.offset));
    bytes[end - 4..end].copy_from_slice(&sum.to_le_bytes());
}

fn probes() -> Vec<Vec<u8>> {
    let mut rng = Rng(7);
    let mut out: Vec<Vec<u8>> = (0..40)
        .map(|_| format!("{:016x}", rng.next_u64()).into_bytes())
        .collect();
    out.push(Vec::new());
    out.push(b"a".to_vec());
    out
}

#[test]
fn corpus_opens_and_verifies() {
    for (name, bytes) in corpus() {
        let sst = SstFile::from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        sst.verify_checksums().unwrap_or_else(|e| panic!("{name}: {e}"));
        let report = sst.verify_filter().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(report.miss_count, 0, "{name}");
        assert!(report.keys >= 1000, "{name}");
    }
}

#[test]
fn mutated_files_never_panic() {
    let n = mutations_per_kind();
    let probes = probes();
    let mut rng = Rng(0x5EED);
    let mut opened = 0usize;
    let mut total = 0usize;
    for (_name, original) in corpus() {
        let sst = SstFile::from_bytes(original.clone()).unwrap();
        let footer = sst.footer().clone();
        let blocks = sst.blocks().unwrap();
        let len = original.len();
        for kind in 0..7 {
            for _ in 0..n {
                let mut b = original.clone();
                match kind {
                    // Random flips, a quarter of them in the footer.
                    0 => {
                        for _ in 0..1 + below(&mut rng, 4) {
                            let at = if below(&mut rng, 4) == 0 {
                                len - 1 - below(&mut rng, 64.min(len))
                            } else {
                                below(&mut rng, len)
                            };
                            b[at] ^= 1 << below(&mut rng, 8);
                        }
                    }
                    // Truncation.
                    1 => b.truncate(below(&mut rng, len)),
                    // Inserted bytes.
                    2 => {
                        let at = below(&mut rng, len + 1);
                        let extra: Vec<u8> = (0..1 + below(&mut rng, 16))
                            .map(|_| rng.next_u64() as u8)
                            .collect();
                        b.splice(at..at, extra);
                    }
                    // Flips inside one block, checksum fixed up.
                    3..=5 => {
                        let (_, h) = blocks[below(&mut rng, blocks.len())];
                        let span = (h.size as usize + 5).max(1);
                        for _ in 0..1 + below(&mut rng, 3) {
                            let at = h.offset as usize + below(&mut rng, span.min(h.size as usize + 1));
                            if at < b.len() {
                                match kind {
                                    3 => b[at] ^= 1 << below(&mut rng, 8),
                                    4 => b[at] = 0xff,
                                    _ => b[at] = rng.next_u64() as u8,
                                }
                            }
                        }
                        fix_block(&mut b, &footer, h);
                    }
                    // A run of 0xff or 0x00 (bad varints, huge sizes) in a
                    // block, checksum fixed up.
                    _ => {
                        let (_, h) = blocks[below(&mut rng, blocks.len())];
                        let start = h.offset as usize + below(&mut rng, h.size as usize + 1);
                        let run = 1 + below(&mut rng, 12);
                        let v = if below(&mut rng, 2) == 0 { 0xff } else { 0x00 };
                        for x in b.iter_mut().skip(start).take(run) {
                            *x = v;
                        }
                        fix_block(&mut b, &footer, h);
                    }
                }
                opened += usize::from(exercise(b, &probes));
                total += 1;
            }
        }
    }
    // The checksum fix-ups let a good share through to the deeper parsers.
    assert!(opened * 10 > total, "{opened} of {total} mutated files opened");
}

#[test]
fn tiny_and_degenerate_inputs() {
    let probes = probes();
    for len in 0..120 {
        for fill in [0u8, 0xff, 0x80] {
            exercise(vec![fill; len], &probes);
        }
    }
    // Every suffix of a real file: footers at the wrong place.
    let (_, original) = &corpus()[0];
    for cut in (0..original.len()).step_by(97) {
        exercise(original[cut..].to_vec(), &probes);
    }
}

/// Opening by the file's tail (rereading further back as the meta blocks
/// require) reads the same table as reading the whole file.
#[test]
fn tail_reads_match_whole_reads() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let probes = probes();
    for (name, bytes) in corpus() {
        let whole = SstFile::from_bytes(bytes.clone()).unwrap();
        let want_blocks = whole.blocks().unwrap();
        let want_info = TableInfo::new(&whole);
        for tail in [1, 60, 500, 4096, 1 << 20] {
            let sst =
                SstFile::open_with_tail(dir.join(&name), tail).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(TableInfo::new(&sst), want_info, "{name} tail {tail}");
            assert_eq!(sst.key_may_match_many(&probes), whole.key_may_match_many(&probes));
            assert_eq!(sst.blocks().unwrap(), want_blocks, "{name} tail {tail}");
            assert_eq!(sst.verify_filter().unwrap(), whole.verify_filter().unwrap());
        }
    }
}
