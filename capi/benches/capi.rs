//! The C batch query against the Rust batch, in the same run: an SST whose
//! full filter is RocksDB's Standard128 Ribbon (`ribbonfilter:10`, 10^6
//! keys, 1.2 MB of filter), asked 10^5 keys at a time (half members), key
//! hashing included.
//!
//! * `rust`: `SstFile::key_may_match_many(&[&[u8]])` (answers as a `Vec<bool>`);
//! * `c`: `ribbon_sst_may_match_many(handle, keys, key_lens, n, out)`, the
//!   exported C function with C's pointer and length arrays, answers into
//!   the caller's buffer.
//!
//! `cargo bench -p ribbon-capi --bench capi`; numbers and conditions in
//! docs/c-api.md.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ribbon::sst::{ribbon_sst_close, ribbon_sst_may_match_many, ribbon_sst_open_bytes, RibbonSst};
use ribbon::RIBBON_OK;
use ribbon_sst::{ChecksumType, SstFile};
use rocks_ribbon::{BuildContext, FilterBuilder, FilterPolicy};
use std::time::Duration;

#[allow(dead_code)]
#[path = "../../sst/tests/support/sst_writer.rs"]
mod sst_writer;
use sst_writer::{block, handle_value, internal_key, SstWriter, NO_COMPRESSION};

const KEYS: usize = 1_000_000;
const BATCH: usize = 100_000;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:013}").into_bytes()
}

/// A format_version 5 table (CRC-32C) whose full filter holds `KEYS` keys;
/// one data block holds the first and last keys (the filter is what is
/// asked).
fn table() -> Vec<u8> {
    let policy: FilterPolicy = "ribbonfilter:10".parse().unwrap();
    let mut b = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(5)).unwrap();
    for i in 0..KEYS {
        b.add_key(key(i));
    }
    let filter_bytes = b.finish();
    let mut w = SstWriter::new(ChecksumType::Crc32c);
    let entries = vec![
        (internal_key(&key(0)), b"v".to_vec()),
        (internal_key(&key(KEYS - 1)), b"v".to_vec()),
    ];
    let data = w.add_block(&block(&entries, 16), NO_COMPRESSION);
    let index = w.add_block(
        &block(&[(internal_key(&key(KEYS - 1)), handle_value(data))], 1),
        NO_COMPRESSION,
    );
    let filter = w.add_block(&filter_bytes, NO_COMPRESSION);
    let props = w.add_properties(&[
        ("rocksdb.index.key.is.user.key", vec![0]),
        ("rocksdb.index.value.is.delta.encoded", vec![0]),
        ("rocksdb.filter.policy", b"ribbonfilter".to_vec()),
    ]);
    w.finish(
        &[
            ("fullfilter.rocksdb.BuiltinBloomFilter", filter),
            ("rocksdb.properties", props),
        ],
        index,
    )
}

fn bench(c: &mut Criterion) {
    let bytes = table();
    let sst = SstFile::from_bytes(bytes.clone()).unwrap();
    assert!(sst.filter().summary().kind_label().contains("Ribbon"));
    let mut handle: *mut RibbonSst = std::ptr::null_mut();
    // SAFETY: a live buffer and out-pointer.
    let rc = unsafe { ribbon_sst_open_bytes(bytes.as_ptr(), bytes.len(), &mut handle) };
    assert_eq!(rc, RIBBON_OK);
    // Half members, half not, interleaved.
    let probes: Vec<Vec<u8>> = (0..BATCH)
        .map(|i| {
            if i % 2 == 0 {
                key(i * 7)
            } else {
                format!("absent{i:012}").into_bytes()
            }
        })
        .collect();
    let slices: Vec<&[u8]> = probes.iter().map(Vec::as_slice).collect();
    let ptrs: Vec<*const u8> = probes.iter().map(|k| k.as_ptr()).collect();
    let lens: Vec<usize> = probes.iter().map(Vec::len).collect();
    let mut out = vec![0u8; BATCH];
    // The same answers, members all "may match".
    // SAFETY: arrays of BATCH elements over live keys; out holds BATCH bytes.
    let rc =
        unsafe { ribbon_sst_may_match_many(handle, ptrs.as_ptr(), lens.as_ptr(), BATCH, out.as_mut_ptr()) };
    assert_eq!(rc, RIBBON_OK);
    let rust = sst.key_may_match_many(&slices);
    assert!(out.iter().zip(&rust).all(|(&c, &r)| (c == 1) == r));
    assert!(rust.iter().step_by(2).all(|&a| a));

    // Interleaved, robust to a loaded machine: 41 rounds, each timing one
    // Rust batch and one C batch back to back (the order alternating); the
    // fastest of each is the closest to the machine's unloaded speed.
    let (mut rust_ns, mut c_ns) = (Vec::new(), Vec::new());
    for round in 0..41 {
        for side in [round % 2, 1 - round % 2] {
            let t = std::time::Instant::now();
            if side == 0 {
                std::hint::black_box(sst.key_may_match_many(std::hint::black_box(&slices)));
                rust_ns.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
            } else {
                // SAFETY: as above.
                let rc = unsafe {
                    ribbon_sst_may_match_many(handle, ptrs.as_ptr(), lens.as_ptr(), BATCH, out.as_mut_ptr())
                };
                assert_eq!(rc, RIBBON_OK);
                std::hint::black_box(&out);
                c_ns.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
            }
        }
    }
    let stats = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2])
    };
    let ((rust_min, rust_median), (c_min, c_median)) = (stats(&mut rust_ns), stats(&mut c_ns));
    println!(
        "interleaved, 41 rounds of {BATCH} keys: rust min {rust_min:.2} median {rust_median:.2} ns/key; \
         c min {c_min:.2} median {c_median:.2} ns/key; c/rust {:.3} (min) {:.3} (median)",
        c_min / rust_min,
        c_median / rust_median
    );

    let mut g = c.benchmark_group("sst_may_match_many_ribbon_1e6");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.sample_size(30);
    g.measurement_time(Duration::from_secs(4));
    g.warm_up_time(Duration::from_secs(1));
    g.bench_function("rust", |b| {
        b.iter(|| sst.key_may_match_many(std::hint::black_box(&slices)))
    });
    g.bench_function("c", |b| {
        b.iter(|| {
            // SAFETY: as above.
            let rc = unsafe {
                ribbon_sst_may_match_many(
                    handle,
                    std::hint::black_box(ptrs.as_ptr()),
                    lens.as_ptr(),
                    BATCH,
                    out.as_mut_ptr(),
                )
            };
            assert_eq!(rc, RIBBON_OK);
        })
    });
    g.finish();
    // SAFETY: a live handle, closed once.
    unsafe { ribbon_sst_close(handle) };
}

criterion_group!(benches, bench);
criterion_main!(benches);
