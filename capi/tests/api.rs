//! The C API called as C calls it (the `extern "C"` functions, raw
//! pointers): answers equal the Rust API's and RocksDB's recorded ones,
//! and every bad argument is an error code with a message, never a crash.

use ribbon::*;
use ribbon_sst::SstFile;
use rocks_ribbon::{BuildContext, FilterPolicy, FilterReader};
use std::ffi::{c_char, CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};

use ribbon::db::*;
use ribbon::filter::*;
use ribbon::reconcile::*;
use ribbon::sst::*;
use ribbon::standalone::*;

mod support;
use support::{cpath, last_error, root};

/// Pointer and length arrays over `keys`, as C passes them.
fn arrays<K: AsRef<[u8]>>(keys: &[K]) -> (Vec<*const u8>, Vec<usize>) {
    (
        keys.iter().map(|k| k.as_ref().as_ptr()).collect(),
        keys.iter().map(|k| k.as_ref().len()).collect(),
    )
}

/// The SST files of the conformance vectors, with their probes and the
/// answers RocksDB's `Get` gave.
fn conformance_ssts() -> Vec<(PathBuf, Vec<Vec<u8>>, Vec<bool>)> {
    let dir = root().join("conformance/v1");
    let tsv = std::fs::read_to_string(dir.join("sst.tsv")).unwrap();
    let mut out = Vec::new();
    for line in tsv
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("id\t"))
    {
        let f: Vec<&str> = line.split('\t').collect();
        let probes = std::fs::read_to_string(dir.join(f[3])).unwrap();
        let probes: Vec<Vec<u8>> = probes.lines().map(unhex).collect();
        let answers = std::fs::read_to_string(dir.join(f[4])).unwrap();
        let answers: Vec<bool> = answers.lines().map(|a| a.trim() == "1").collect();
        assert_eq!(probes.len(), answers.len(), "{}", f[0]);
        out.push((dir.join(f[2]), probes, answers));
    }
    assert!(out.len() >= 20, "{} SST cases", out.len());
    out
}

fn unhex(s: &str) -> Vec<u8> {
    let s = s.trim();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

fn open_sst(path: &Path) -> *mut RibbonSst {
    let mut h = null_mut();
    // SAFETY: a valid path and out-pointer.
    let rc = unsafe { ribbon_sst_open(cpath(path).as_ptr(), &mut h) };
    assert_eq!(rc, RIBBON_OK, "{}: {}", path.display(), last_error());
    assert!(!h.is_null());
    h
}

fn sst_many(h: *const RibbonSst, keys: &[Vec<u8>]) -> Vec<bool> {
    let (p, l) = arrays(keys);
    let mut out = vec![7u8; keys.len()];
    // SAFETY: arrays of keys.len() elements over live keys.
    let rc = unsafe { ribbon_sst_may_match_many(h, p.as_ptr(), l.as_ptr(), keys.len(), out.as_mut_ptr()) };
    assert_eq!(rc, RIBBON_OK, "{}", last_error());
    assert!(out.iter().all(|&a| a <= 1), "answers are 0 or 1");
    out.iter().map(|&a| a == 1).collect()
}

#[test]
fn the_abi_version_is_the_headers() {
    assert_eq!(ribbon_abi_version(), RIBBON_ABI_VERSION);
    let header = std::fs::read_to_string(root().join("capi/include/ribbon.h")).unwrap();
    assert!(header.contains(&format!("#define RIBBON_ABI_VERSION {RIBBON_ABI_VERSION}")));
}

/// Every SST RocksDB wrote: the batch and the one-key answers equal the
/// Rust API's and RocksDB's own `Get`'s, for every probe.
#[test]
fn sst_answers_equal_the_rust_api_and_rocksdb() {
    for (path, probes, want) in conformance_ssts() {
        let h = open_sst(&path);
        let rust = SstFile::open(&path).unwrap();
        let got = sst_many(h, &probes);
        assert_eq!(got, rust.key_may_match_many(&probes), "{}", path.display());
        assert_eq!(got, want, "{}: RocksDB's Get", path.display());
        for (k, &g) in probes.iter().zip(&got).take(50) {
            let mut one = 9u8;
            // SAFETY: a live handle and key.
            assert_eq!(
                // SAFETY: live handles, arrays over live keys, valid out-pointers.
                unsafe { ribbon_sst_may_match(h, k.as_ptr(), k.len(), &mut one) },
                RIBBON_OK
            );
            assert_eq!(one == 1, g);
        }
        // Prefix queries: the Rust API's answers, or its error as a code.
        let (p, l) = arrays(&probes);
        let mut out = vec![0u8; probes.len()];
        // SAFETY: arrays over live keys.
        let rc = unsafe {
            ribbon_sst_prefix_may_match_many(h, p.as_ptr(), l.as_ptr(), probes.len(), out.as_mut_ptr())
        };
        match rust.prefix_may_match_many(&probes) {
            Ok(want) => {
                assert_eq!(rc, RIBBON_OK, "{}", last_error());
                assert_eq!(out.iter().map(|&a| a == 1).collect::<Vec<_>>(), want);
            }
            Err(e) => {
                assert_eq!(rc, RIBBON_ERR_UNSUPPORTED, "{}", path.display());
                assert_eq!(last_error(), e.to_string());
            }
        }
        // Info: the TableInfo's fields.
        let mut json: *mut c_char = null_mut();
        // SAFETY: a live handle and out-pointer.
        assert_eq!(unsafe { ribbon_sst_info_json(h, &mut json) }, RIBBON_OK);
        // SAFETY: the library's string, freed once below.
        let text = unsafe { CStr::from_ptr(json) }.to_str().unwrap().to_owned();
        // SAFETY: returned by ribbon_sst_info_json.
        unsafe { ribbon_string_free(json) };
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let info = ribbon_sst::TableInfo::new(&rust);
        assert_eq!(v["filter_layout"], info.filter_layout, "{text}");
        assert_eq!(v["filter_kind"], info.filter_kind.as_str());
        assert_eq!(v["format_version"], info.format_version);
        assert_eq!(v["whole_key_filtering"], info.whole_key_filtering);
        // SAFETY: a live handle, closed once.
        unsafe { ribbon_sst_close(h) };
    }
}

/// The same bytes through `ribbon_sst_open_bytes` answer alike; corrupt
/// or truncated bytes are an error code with a message, never a crash.
#[test]
fn sst_bytes_and_corrupt_bytes() {
    let path = root().join("conformance/v1/sst/full_ribbon_fv7_zstd_xxh3.sst");
    let bytes = std::fs::read(&path).unwrap();
    let probes: Vec<Vec<u8>> = (0..1000u32).map(|i| format!("probe{i}").into_bytes()).collect();
    let from_file = open_sst(&path);
    let mut h = null_mut();
    // SAFETY: valid bytes and out-pointer.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sst_open_bytes(bytes.as_ptr(), bytes.len(), &mut h) },
        RIBBON_OK
    );
    assert_eq!(sst_many(h, &probes), sst_many(from_file, &probes));
    // SAFETY: live handles, closed once.
    unsafe {
        ribbon_sst_close(h);
        ribbon_sst_close(from_file);
    }
    let mut seen_corrupt = false;
    for cut in [0, 1, 20, bytes.len() / 2, bytes.len() - 1] {
        let mut h = std::ptr::dangling_mut::<RibbonSst>();
        // SAFETY: `cut` bytes of a live buffer.
        let rc = unsafe { ribbon_sst_open_bytes(bytes.as_ptr(), cut, &mut h) };
        assert_ne!(rc, RIBBON_OK, "{cut} bytes opened");
        assert!(h.is_null(), "the handle is cleared on failure");
        assert!(!last_error().is_empty());
        seen_corrupt |= rc == RIBBON_ERR_CORRUPT;
    }
    assert!(seen_corrupt);
    // A flipped byte in the filter block: its checksum catches it.
    let mut flipped = bytes.clone();
    let at = bytes.len() - 2000;
    flipped[at] ^= 0x40;
    let mut h = null_mut();
    // SAFETY: a live buffer.
    let rc = unsafe { ribbon_sst_open_bytes(flipped.as_ptr(), flipped.len(), &mut h) };
    if rc == RIBBON_OK {
        // The byte was outside what open reads (a data block): answers
        // are still the file's.
        assert_eq!(sst_many(h, &probes).len(), probes.len());
        // SAFETY: live handle.
        unsafe { ribbon_sst_close(h) };
    } else {
        assert_eq!(rc, RIBBON_ERR_CORRUPT, "{}", last_error());
    }
}

#[test]
fn null_pointers_and_bad_lengths_are_errors() {
    let path = root().join("conformance/v1/sst/full_ribbon_fv7_zstd_xxh3.sst");
    let h = open_sst(&path);
    let key = b"k";
    let mut one = 0u8;
    let lens = [1usize; 4];
    let ptrs = [key.as_ptr(); 4];
    let mut out = [0u8; 4];
    // SAFETY: every call gets NULL where the contract allows it or checks it.
    unsafe {
        assert_eq!(
            ribbon_sst_may_match(null(), key.as_ptr(), 1, &mut one),
            RIBBON_ERR_NULL
        );
        assert!(last_error().contains("NULL"), "{}", last_error());
        assert_eq!(ribbon_sst_may_match(h, null(), 1, &mut one), RIBBON_ERR_NULL);
        assert_eq!(
            ribbon_sst_may_match(h, key.as_ptr(), 1, null_mut()),
            RIBBON_ERR_NULL
        );
        // The empty key may be NULL.
        assert_eq!(ribbon_sst_may_match(h, null(), 0, &mut one), RIBBON_OK);
        assert_eq!(
            ribbon_sst_may_match_many(h, null(), lens.as_ptr(), 4, out.as_mut_ptr()),
            RIBBON_ERR_NULL
        );
        assert_eq!(
            ribbon_sst_may_match_many(h, ptrs.as_ptr(), null(), 4, out.as_mut_ptr()),
            RIBBON_ERR_NULL
        );
        assert_eq!(
            ribbon_sst_may_match_many(h, ptrs.as_ptr(), lens.as_ptr(), 4, null_mut()),
            RIBBON_ERR_NULL
        );
        // No keys: NULL everywhere is fine.
        assert_eq!(
            ribbon_sst_may_match_many(h, null(), null(), 0, null_mut()),
            RIBBON_OK
        );
        // One NULL key of nonzero length among good ones.
        let bad = [key.as_ptr(), null(), key.as_ptr(), key.as_ptr()];
        assert_eq!(
            ribbon_sst_may_match_many(h, bad.as_ptr(), lens.as_ptr(), 4, out.as_mut_ptr()),
            RIBBON_ERR_NULL
        );
        assert!(last_error().contains("key 1"), "{}", last_error());
        // A length no buffer can have.
        assert_eq!(
            ribbon_sst_may_match(h, key.as_ptr(), usize::MAX, &mut one),
            RIBBON_ERR_ARGUMENT
        );
        assert_eq!(
            ribbon_sst_may_match_many(h, ptrs.as_ptr(), lens.as_ptr(), usize::MAX / 2, out.as_mut_ptr()),
            RIBBON_ERR_ARGUMENT
        );
        assert_eq!(ribbon_sst_open(null(), &mut null_mut()), RIBBON_ERR_NULL);
        assert_eq!(
            ribbon_sst_open(cpath(&path).as_ptr(), null_mut()),
            RIBBON_ERR_NULL
        );
        assert_eq!(ribbon_sst_info_json(null(), &mut null_mut()), RIBBON_ERR_NULL);
        // Closing NULL is a no-op.
        ribbon_sst_close(null_mut());
        ribbon_filter_close(null_mut());
        ribbon_standalone_close(null_mut());
        ribbon_sharded_close(null_mut());
        ribbon_db_close(null_mut());
        ribbon_sketch_free(null_mut());
        ribbon_difference_free(null_mut());
        ribbon_bytes_free(null_mut(), 0);
        ribbon_string_free(null_mut());
        ribbon_sst_close(h);
    }
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let mut h = std::ptr::dangling_mut::<RibbonSst>();
    let path = CString::new("/nonexistent/dir/file.sst").unwrap();
    // SAFETY: valid arguments.
    assert_eq!(unsafe { ribbon_sst_open(path.as_ptr(), &mut h) }, RIBBON_ERR_IO);
    assert!(h.is_null());
    assert!(
        last_error().contains("/nonexistent/dir/file.sst"),
        "{}",
        last_error()
    );
    let mut s = std::ptr::dangling_mut::<RibbonStandalone>();
    // SAFETY: valid arguments.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_standalone_open_path(path.as_ptr(), &mut s) },
        RIBBON_ERR_IO
    );
    assert!(s.is_null());
    let mut d = null_mut();
    // SAFETY: valid arguments.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_db_open(path.as_ptr(), null(), &mut d) },
        RIBBON_ERR_IO,
        "{}",
        last_error()
    );
}

#[test]
fn the_last_error_is_per_thread() {
    let mut h = null_mut();
    // SAFETY: a NULL path is checked.
    assert_eq!(unsafe { ribbon_sst_open(null(), &mut h) }, RIBBON_ERR_NULL);
    let here = last_error();
    std::thread::spawn(|| assert_eq!(last_error(), ""))
        .join()
        .unwrap();
    assert_eq!(last_error(), here);
}

fn build_rocksdb_filter(policy: &str, fv: i32, keys: &[Vec<u8>]) -> Result<Vec<u8>, i32> {
    let (p, l) = arrays(keys);
    let policy = CString::new(policy).unwrap();
    let (mut out, mut len) = (null_mut(), 0usize);
    // SAFETY: valid arrays and out-pointers.
    let rc = unsafe {
        ribbon_filter_build(
            policy.as_ptr(),
            fv,
            p.as_ptr(),
            l.as_ptr(),
            keys.len(),
            &mut out,
            &mut len,
        )
    };
    if rc != RIBBON_OK {
        return Err(rc);
    }
    // SAFETY: the library's buffer of `len` bytes, freed once.
    let v = unsafe { std::slice::from_raw_parts(out, len) }.to_vec();
    // SAFETY: as returned.
    unsafe { ribbon_bytes_free(out, len) };
    Ok(v)
}

/// RocksDB-format filters: the bytes equal the Rust builder's (which the
/// compatibility suite checks against RocksDB), members all match, and the
/// answers equal the Rust reader's.
#[test]
fn rocksdb_format_filters_equal_the_rust_api() {
    let keys: Vec<Vec<u8>> = (0..5000u32).map(|i| format!("key{i}").into_bytes()).collect();
    let probes: Vec<Vec<u8>> = (0..20000u32).map(|i| format!("probe{i}").into_bytes()).collect();
    for (policy, fv) in [
        ("ribbonfilter:10", 7),
        ("bloomfilter:10", 5),
        ("bloomfilter:10:true", 2),
        ("ribbonfilter:8.5", 4),
    ] {
        let bytes = build_rocksdb_filter(policy, fv, &keys).unwrap();
        let p: FilterPolicy = policy.parse().unwrap();
        let want = rocks_ribbon::build_filter(&p, &BuildContext::sst_file_writer(fv), &keys).unwrap();
        assert_eq!(bytes, want, "{policy}");
        let mut h = null_mut();
        // SAFETY: a live buffer.
        assert_eq!(
            // SAFETY: live handles, arrays over live keys, valid out-pointers.
            unsafe { ribbon_filter_open(bytes.as_ptr(), bytes.len(), &mut h) },
            RIBBON_OK,
            "{}",
            last_error()
        );
        for (set, all) in [(&keys, true), (&probes, false)] {
            let (ptrs, lens) = arrays(set);
            let mut out = vec![0u8; set.len()];
            // SAFETY: arrays over live keys.
            let rc = unsafe {
                ribbon_filter_may_match_many(h, ptrs.as_ptr(), lens.as_ptr(), set.len(), out.as_mut_ptr())
            };
            assert_eq!(rc, RIBBON_OK);
            let got: Vec<bool> = out.iter().map(|&a| a == 1).collect();
            assert_eq!(got, FilterReader::new(&want).may_match_many(set), "{policy}");
            if all {
                assert!(got.iter().all(|&a| a), "{policy}: a member does not match");
            } else {
                // About 1 % false positives at 10 bits/key: not all "yes".
                let fp = got.iter().filter(|&&a| a).count();
                assert!(fp < set.len() / 20, "{policy}: {fp} false positives");
            }
        }
        // SAFETY: live handle.
        unsafe { ribbon_filter_close(h) };
    }
    assert_eq!(
        build_rocksdb_filter("nosuchfilter:10", 7, &keys),
        Err(RIBBON_ERR_ARGUMENT)
    );
    assert!(last_error().contains("nosuchfilter"), "{}", last_error());
    assert_eq!(
        build_rocksdb_filter("ribbonfilter:10", 9, &keys),
        Err(RIBBON_ERR_ARGUMENT)
    );
    // Bytes that are no filter RocksDB writes.
    let mut h = std::ptr::dangling_mut::<RibbonFilter>();
    let junk = [0xffu8; 3];
    // SAFETY: a live buffer.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_filter_open(junk.as_ptr(), junk.len(), &mut h) },
        RIBBON_ERR_CORRUPT
    );
    assert!(h.is_null());
}

fn standalone_many(h: *const RibbonStandalone, keys: &[Vec<u8>]) -> Vec<bool> {
    let (p, l) = arrays(keys);
    let mut out = vec![0u8; keys.len()];
    // SAFETY: arrays over live keys.
    let rc =
        unsafe { ribbon_standalone_contains_many(h, p.as_ptr(), l.as_ptr(), keys.len(), out.as_mut_ptr()) };
    assert_eq!(rc, RIBBON_OK, "{}", last_error());
    out.iter().map(|&a| a == 1).collect()
}

/// Standalone and Balanced filters: the bytes equal the Rust build's, they
/// go through a memory-mapped file, members all match, and corrupt bytes
/// are refused.
#[test]
fn standalone_filters_build_serialise_and_map() {
    let keys: Vec<Vec<u8>> = (0..3000u32).map(|i| format!("key{i}").into_bytes()).collect();
    let probes: Vec<Vec<u8>> = (0..3000u32).map(|i| format!("probe{i}").into_bytes()).collect();
    let mut config = RibbonStandaloneConfig {
        width: 0,
        result_bits: 0.0,
        fp_rate: 0.0,
        homogeneous: 0,
        balanced: 0,
        smash: 0,
        seed: 0,
    };
    // SAFETY: a valid out-pointer.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_standalone_config_default(&mut config) },
        RIBBON_OK
    );
    assert_eq!(config.width, 128);
    let dir = tempfile::tempdir().unwrap();
    for (width, balanced) in [(128, 0u8), (64, 1), (32, 0)] {
        config.width = width;
        config.balanced = balanced;
        let (p, l) = arrays(&keys);
        let mut h = null_mut();
        // SAFETY: valid arrays and out-pointer.
        let rc = unsafe { ribbon_standalone_build(&config, p.as_ptr(), l.as_ptr(), keys.len(), &mut h) };
        assert_eq!(rc, RIBBON_OK, "{}", last_error());
        let rust_config = rocks_ribbon::standalone::Config {
            width,
            balanced: balanced != 0,
            ..Default::default()
        };
        let rust = rocks_ribbon::standalone::Ribbon::from_keys(&keys, &rust_config).unwrap();
        let (mut out, mut len) = (null_mut(), 0);
        // SAFETY: a live handle and out-pointers.
        assert_eq!(
            // SAFETY: live handles, arrays over live keys, valid out-pointers.
            unsafe { ribbon_standalone_serialize(h, &mut out, &mut len) },
            RIBBON_OK
        );
        // SAFETY: the library's buffer, freed once.
        let bytes = unsafe { std::slice::from_raw_parts(out, len) }.to_vec();
        // SAFETY: as returned.
        unsafe { ribbon_bytes_free(out, len) };
        assert_eq!(bytes, rust.as_bytes(), "width {width}");
        assert!(standalone_many(h, &keys).iter().all(|&a| a));
        assert_eq!(standalone_many(h, &probes), rust.contains_many(&probes));
        let (mut n, mut bpk, mut fp) = (0u64, 0f64, 0f64);
        // SAFETY: valid out-pointers.
        assert_eq!(
            // SAFETY: live handles, arrays over live keys, valid out-pointers.
            unsafe { ribbon_standalone_stats(h, &mut n, &mut bpk, &mut fp) },
            RIBBON_OK
        );
        assert_eq!(n, keys.len() as u64);
        assert!(bpk > 6.0 && bpk < 12.0 && fp > 0.0 && fp < 0.02, "{bpk} {fp}");
        // SAFETY: live handle.
        unsafe { ribbon_standalone_close(h) };
        // Through a file, memory-mapped.
        let file = dir.path().join(format!("f{width}.rbn"));
        std::fs::write(&file, &bytes).unwrap();
        let mut m = null_mut();
        // SAFETY: valid path and out-pointer.
        assert_eq!(
            // SAFETY: live handles, arrays over live keys, valid out-pointers.
            unsafe { ribbon_standalone_open_path(cpath(&file).as_ptr(), &mut m) },
            RIBBON_OK
        );
        assert_eq!(standalone_many(m, &probes), rust.contains_many(&probes));
        // SAFETY: live handle.
        unsafe { ribbon_standalone_close(m) };
        // Corrupt: one byte flipped in the body, and truncated.
        let mut bad = bytes.clone();
        let at = bad.len() / 2;
        bad[at] ^= 1;
        for b in [&bad[..], &bytes[..bytes.len() - 1], &[][..]] {
            let mut x = std::ptr::dangling_mut::<RibbonStandalone>();
            // SAFETY: a live buffer.
            assert_eq!(
                // SAFETY: live handles, arrays over live keys, valid out-pointers.
                unsafe { ribbon_standalone_open_bytes(b.as_ptr(), b.len(), &mut x) },
                RIBBON_ERR_CORRUPT
            );
            assert!(x.is_null());
        }
    }
    config.width = 16;
    let mut h = null_mut();
    // SAFETY: no keys.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_standalone_build(&config, null(), null(), 0, &mut h) },
        RIBBON_ERR_ARGUMENT
    );
    assert!(last_error().contains("width"), "{}", last_error());
}

#[test]
fn sharded_filters_answer_as_the_rust_view() {
    let keys: Vec<Vec<u8>> = (0..4000u32).map(|i| format!("key{i}").into_bytes()).collect();
    let probes: Vec<Vec<u8>> = (0..4000u32).map(|i| format!("probe{i}").into_bytes()).collect();
    let (p, l) = arrays(&keys);
    let (mut out, mut len) = (null_mut(), 0);
    // SAFETY: valid arrays and out-pointers; NULL config is the default.
    let rc =
        unsafe { ribbon_sharded_build(null(), 3, p.as_ptr(), l.as_ptr(), keys.len(), &mut out, &mut len) };
    assert_eq!(rc, RIBBON_OK, "{}", last_error());
    // SAFETY: the library's buffer, freed once.
    let bytes = unsafe { std::slice::from_raw_parts(out, len) }.to_vec();
    // SAFETY: as returned.
    unsafe { ribbon_bytes_free(out, len) };
    let view = rocks_ribbon::standalone::sharded::ShardedRef::from_bytes(&bytes).unwrap();
    assert_eq!(view.num_shards(), 8);
    let mut h = null_mut();
    // SAFETY: a live buffer.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sharded_open_bytes(bytes.as_ptr(), bytes.len(), &mut h) },
        RIBBON_OK
    );
    for (set, member) in [(&keys, true), (&probes, false)] {
        let (p, l) = arrays(set);
        let mut out = vec![0u8; set.len()];
        // SAFETY: arrays over live keys.
        let rc =
            unsafe { ribbon_sharded_contains_many(h, p.as_ptr(), l.as_ptr(), set.len(), out.as_mut_ptr()) };
        assert_eq!(rc, RIBBON_OK);
        let got: Vec<bool> = out.iter().map(|&a| a == 1).collect();
        assert_eq!(got, view.contains_many(set));
        if member {
            assert!(got.iter().all(|&a| a));
        }
    }
    let (mut n, mut shards) = (0, 0);
    // SAFETY: valid out-pointers.
    assert_eq!(unsafe { ribbon_sharded_stats(h, &mut n, &mut shards) }, RIBBON_OK);
    assert_eq!((n, shards), (keys.len() as u64, 8));
    // SAFETY: live handle.
    unsafe { ribbon_sharded_close(h) };
    // SAFETY: no keys.
    let rc = unsafe { ribbon_sharded_build(null(), 40, null(), null(), 0, &mut out, &mut len) };
    assert_eq!(rc, RIBBON_ERR_ARGUMENT);
}

fn sketch(keys: &[Vec<u8>], cells: usize) -> *mut RibbonSketch {
    let mut s = null_mut();
    // SAFETY: a valid out-pointer.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_new(3, cells, &mut s) },
        RIBBON_OK,
        "{}",
        last_error()
    );
    let (p, l) = arrays(keys);
    // SAFETY: arrays over live keys.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_insert_many(s, p.as_ptr(), l.as_ptr(), keys.len()) },
        RIBBON_OK
    );
    s
}

fn side(d: *const RibbonDifference, which: i32) -> Vec<Vec<u8>> {
    let mut n = 0;
    // SAFETY: a live difference.
    assert_eq!(unsafe { ribbon_difference_count(d, which, &mut n) }, RIBBON_OK);
    (0..n)
        .map(|i| {
            let (mut k, mut len) = (null(), 0);
            // SAFETY: a live difference, i < n.
            assert_eq!(
                // SAFETY: live handles, arrays over live keys, valid out-pointers.
                unsafe { ribbon_difference_key(d, which, i, &mut k, &mut len) },
                RIBBON_OK
            );
            // SAFETY: the difference's key of `len` bytes, alive until freed.
            unsafe { std::slice::from_raw_parts(k, len) }.to_vec()
        })
        .collect()
}

#[test]
fn reconcile_lists_the_known_difference() {
    let a: Vec<Vec<u8>> = (0..5000u32)
        .filter(|i| i % 500 != 7)
        .map(|i| format!("k{i}").into_bytes())
        .collect();
    let b: Vec<Vec<u8>> = (30..5030u32).map(|i| format!("k{i}").into_bytes()).collect();
    let (sa, sb) = (sketch(&a, 0), sketch(&b, 0));
    let (mut est, mut cells) = (0u64, 0usize);
    // SAFETY: live sketches and out-pointers.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_estimate(sa, sb, &mut est, &mut cells) },
        RIBBON_OK
    );
    let mut d = null_mut();
    // SAFETY: estimator-only sketches cannot list the difference.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_diff(sa, sb, &mut d) },
        RIBBON_ERR_TOO_LARGE
    );
    assert!(d.is_null());
    // Through bytes, as one side sends the other.
    let (sa2, sb2) = (sketch(&a, cells), sketch(&b, cells));
    let (mut out, mut len) = (null_mut(), 0);
    // SAFETY: live sketch and out-pointers.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_serialize(sb2, &mut out, &mut len) },
        RIBBON_OK
    );
    let mut sb3 = null_mut();
    // SAFETY: the library's buffer.
    assert_eq!(unsafe { ribbon_sketch_open_bytes(out, len, &mut sb3) }, RIBBON_OK);
    // SAFETY: as returned.
    unsafe { ribbon_bytes_free(out, len) };
    // SAFETY: live sketches.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_diff(sa2, sb3, &mut d) },
        RIBBON_OK,
        "{}",
        last_error()
    );
    let mut only_a: Vec<Vec<u8>> = a.iter().filter(|k| !b.contains(k)).cloned().collect();
    let mut only_b: Vec<Vec<u8>> = b.iter().filter(|k| !a.contains(k)).cloned().collect();
    only_a.sort();
    only_b.sort();
    assert_eq!(side(d, 0), only_a);
    assert_eq!(side(d, 1), only_b);
    let mut n = 0;
    // SAFETY: a bad side is checked.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_difference_count(d, 2, &mut n) },
        RIBBON_ERR_ARGUMENT
    );
    // SAFETY: live handles, freed once each.
    unsafe {
        ribbon_difference_free(d);
        for s in [sa, sb, sa2, sb2, sb3] {
            ribbon_sketch_free(s);
        }
    }
    let mut s = null_mut();
    // SAFETY: too many cells are refused before allocating.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_new(0, usize::MAX, &mut s) },
        RIBBON_ERR_ARGUMENT
    );
    let junk = [1u8, 2, 3];
    // SAFETY: a live buffer.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_open_bytes(junk.as_ptr(), 3, &mut s) },
        RIBBON_ERR_CORRUPT
    );
}

/// A database RocksDB (rocksdict's 9.8.4) wrote: the Get paths equal the
/// Rust reader's, and a sketch of its live keys equals one of the keys
/// that RocksDB listed.
#[test]
fn database_get_paths_and_live_keys() {
    let dir = root().join("sst/tests/fixtures-db/l0_only");
    let expected = std::fs::read_to_string(dir.join("expected")).unwrap();
    let live: Vec<Vec<u8>> = expected
        .lines()
        .filter_map(|l| l.strip_prefix("live "))
        .map(unhex)
        .collect();
    assert!(live.len() > 50);
    let mut db = null_mut();
    // SAFETY: valid path and out-pointer.
    let rc = unsafe { ribbon_db_open(cpath(&dir.join("db")).as_ptr(), null(), &mut db) };
    assert_eq!(rc, RIBBON_OK, "{}", last_error());
    let mut probes = live.clone();
    probes.extend((0..200u32).map(|i| format!("absent{i}").into_bytes()));
    let (p, l) = arrays(&probes);
    let mut json = null_mut();
    // SAFETY: live handle, arrays over live keys.
    let rc = unsafe { ribbon_db_get_paths_json(db, p.as_ptr(), l.as_ptr(), probes.len(), &mut json) };
    assert_eq!(rc, RIBBON_OK, "{}", last_error());
    // SAFETY: the library's string, freed once.
    let text = unsafe { CStr::from_ptr(json) }.to_str().unwrap().to_owned();
    // SAFETY: as returned.
    unsafe { ribbon_string_free(json) };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rust = ribbon_sst::db::Db::open(dir.join("db")).unwrap();
    let paths = rust
        .get_paths(&probes, &mut ribbon_sst::db::get::FileCache::new())
        .unwrap();
    let files: Vec<_> = rust.files().collect();
    assert_eq!(v.as_array().unwrap().len(), probes.len());
    for (i, (j, p)) in v.as_array().unwrap().iter().zip(&paths).enumerate() {
        assert_eq!(j["found"], p.found(), "key {i}");
        assert_eq!(j["found"], i < live.len(), "key {i}: RocksDB's live keys");
        let names: Vec<String> = p.steps.iter().map(|s| files[s.file].name()).collect();
        let got: Vec<&str> = j["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["file"].as_str().unwrap())
            .collect();
        assert_eq!(got, names, "key {i}");
    }
    // The live keys, sketched from the directory and from RocksDB's list.
    let from_db = {
        let mut s = null_mut();
        // SAFETY: valid out-pointer.
        assert_eq!(unsafe { ribbon_sketch_new(1, 100, &mut s) }, RIBBON_OK);
        // SAFETY: live handles.
        assert_eq!(
            // SAFETY: live handles, arrays over live keys, valid out-pointers.
            unsafe { ribbon_sketch_insert_db(s, db) },
            RIBBON_OK,
            "{}",
            last_error()
        );
        s
    };
    let mut from_list = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { ribbon_sketch_new(1, 100, &mut from_list) }, RIBBON_OK);
    let (p, l) = arrays(&live);
    // SAFETY: arrays over live keys.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_insert_many(from_list, p.as_ptr(), l.as_ptr(), live.len()) },
        RIBBON_OK
    );
    let mut d = null_mut();
    // SAFETY: live sketches.
    assert_eq!(
        // SAFETY: live handles, arrays over live keys, valid out-pointers.
        unsafe { ribbon_sketch_diff(from_db, from_list, &mut d) },
        RIBBON_OK
    );
    assert!(side(d, 0).is_empty() && side(d, 1).is_empty());
    // SAFETY: live handles, freed once.
    unsafe {
        ribbon_difference_free(d);
        ribbon_sketch_free(from_db);
        ribbon_sketch_free(from_list);
        ribbon_db_close(db);
    }
}

/// Issue 44: an unknown column family is the caller's mistake
/// (`RIBBON_ERR_ARGUMENT`, not `_UNSUPPORTED`), and a file given as the
/// database directory is named once ("X: X: not a database directory").
#[test]
fn db_open_errors_are_of_their_kind_and_name_the_path_once() {
    let dir = root().join("sst/tests/fixtures-db/l0_only/db");
    let cf = CString::new("no such family").unwrap();
    let mut db = null_mut();
    // SAFETY: valid path, column family and out-pointer.
    let rc = unsafe { ribbon_db_open(cpath(&dir).as_ptr(), cf.as_ptr(), &mut db) };
    assert_eq!(rc, RIBBON_ERR_ARGUMENT, "{}", last_error());
    assert!(db.is_null());
    assert!(last_error().contains("\"no such family\""), "{}", last_error());
    let file = dir.join("CURRENT");
    // SAFETY: valid path and out-pointer.
    let rc = unsafe { ribbon_db_open(cpath(&file).as_ptr(), null(), &mut db) };
    assert_eq!(rc, RIBBON_ERR_UNSUPPORTED, "{}", last_error());
    let e = last_error();
    assert!(e.contains("not a database directory"), "{e}");
    assert_eq!(e.matches(file.to_str().unwrap()).count(), 1, "{e}");
}
