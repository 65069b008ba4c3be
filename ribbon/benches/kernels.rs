//! The query-kernel micro-report of issue 37: ns/query of each Ribbon
//! query kernel (portable, AVX2, AVX-512 where the CPU has them) × filter
//! size (L1, L2, last-level cache, DRAM) × single / batched queries, next
//! to xorf's BinaryFuse8 on the same hashes and the memory-latency floor of
//! a pointer chase over the same number of bytes, all in one process.
//!
//! ```text
//! cargo bench -p rocks-ribbon --bench kernels            # the table, markdown
//! cargo bench -p rocks-ribbon --bench kernels -- --quick # smaller and shorter
//! cargo bench -p rocks-ribbon --bench kernels -- --quick --standard128
//! ```
//!
//! `--standard128` keeps the rows a change of the Standard128 AVX2 query
//! is judged by (its single, batched and batched + hash rows and
//! BinaryFuse8's, at the L1, L2 and LLC sizes): seconds instead of a minute, for
//! several paired runs of two builds on a shared machine.
//!
//! What is timed. Standard128 rows: a [`Standard128Reader`] over random
//! solution bytes (7 result columns, ~1 % FP rate, as RocksDB's
//! `ribbonfilter:10`) of the row's size, asked random 64-bit hashes: for a
//! non-member a real filter's columns are as random as these, so the
//! kernels do exactly a real filter's work for absent keys (a member reads
//! every column: the portable kernel's worst case, not timed here).
//! "single" is one `may_match_hash` after another (independent queries
//! the CPU may overlap); "batched" one `may_match_hashes` call (prefetched
//! 16 queries ahead). "+ hash" adds RocksDB's 64-bit hash of a 16-byte key
//! to each batched query (the issue's "hash included" target). Balanced
//! (width 64) and standalone Standard (width 128) rows are real filters
//! built from the hashes (their detected kernel; members and non-members
//! half and half), at the three cache sizes. BinaryFuse8 is built from the
//! same number of keys as fits the size at 9 bits a key. The floor is one
//! dependent load per query over a random cyclic permutation of cache
//! lines of the row's size. Each cell: the fastest of 41 rounds of 32,768
//! queries (about a millisecond each, so that on a shared machine most
//! rounds run uninterrupted), each round its own queries, the rows of a
//! size interleaved round by round.

use ribbon::core::alg::Standard128;
use ribbon::core::hash::{get_slice_hash64, split_mix64};
use ribbon::core::hasher::Hasher;
use ribbon::rocksdb::standard128::{RibbonKernel, Standard128Reader};
use ribbon::standalone::{Config, Ribbon};
use std::hint::black_box;
use std::time::Instant;
use xorf::{BinaryFuse8, Filter};

/// Columns of the Standard128 rows (~1 % FP rate).
const COLUMNS: usize = 7;

/// One size level: its name and bytes.
struct Level {
    name: &'static str,
    bytes: usize,
}

/// A timed thing: a label and a closure running the queries of a window,
/// giving a count to keep the work alive.
type Run<'a> = (String, Box<dyn FnMut(std::ops::Range<usize>) -> usize + 'a>);

fn random_u64s(n: usize, seed: u64) -> Vec<u64> {
    let mut s = seed;
    (0..n).map(|_| split_mix64(&mut s)).collect()
}

/// ns/query of each run: `rounds` rounds of `window` queries each (round
/// `r` asks queries `r * window ..`), the runs interleaved round by round;
/// the fastest round counts (on a shared machine, rounds of about a
/// millisecond, most of which no other process interrupts).
fn time_rows(runs: &mut [Run<'_>], window: usize, rounds: usize) -> Vec<(String, f64)> {
    let mut best = vec![f64::INFINITY; runs.len()];
    for r in 0..rounds {
        for (i, (_, run)) in runs.iter_mut().enumerate() {
            let t = Instant::now();
            black_box(run(r * window..(r + 1) * window));
            best[i] = best[i].min(t.elapsed().as_nanos() as f64 / window as f64);
        }
    }
    runs.iter()
        .zip(best)
        .map(|((label, _), ns)| (label.clone(), ns))
        .collect()
}

/// A random cyclic permutation of the cache lines of `bytes` bytes (one
/// `usize` index at the start of each 64-byte line).
fn chase_ring(bytes: usize) -> Vec<usize> {
    let lines = (bytes / 64).max(2);
    let mut order: Vec<usize> = (0..lines).collect();
    let mut s = 99u64;
    for i in (1..lines).rev() {
        let j = (split_mix64(&mut s) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    let mut ring = vec![0usize; lines * 8];
    for w in 0..lines {
        ring[order[w] * 8] = order[(w + 1) % lines] * 8;
    }
    ring
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let standard128_only = std::env::args().any(|a| a == "--standard128");
    // Rounds of `window` queries, each round its own (so that the DRAM
    // level's queries do not find the lines of earlier rounds cached).
    let (window, rounds) = if quick { (20_000, 15) } else { (32_768, 41) };
    let queries = window * rounds;
    let levels = [
        Level {
            name: "L1",
            bytes: 16 << 10,
        },
        Level {
            name: "L2",
            bytes: 256 << 10,
        },
        Level {
            name: "LLC",
            bytes: if quick { 4 << 20 } else { 8 << 20 },
        },
        Level {
            name: "DRAM",
            bytes: if quick { 64 << 20 } else { 128 << 20 },
        },
    ];
    let kernels = RibbonKernel::available();
    let hashes = random_u64s(queries, 1);
    let keys: Vec<[u8; 16]> = hashes
        .iter()
        .map(|h| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&h.to_le_bytes());
            k[8..].copy_from_slice(&(!h).to_le_bytes());
            k
        })
        .collect();
    let mut out = vec![false; queries];
    let mut table: Vec<(String, Vec<(String, f64)>)> = Vec::new();
    for level in &levels {
        if standard128_only && level.name == "DRAM" {
            continue;
        }
        eprintln!("{} ({} KiB): building...", level.name, level.bytes >> 10);
        // Standard128 over random solution bytes.
        let num_blocks = (level.bytes / (COLUMNS * 16)).max(2);
        let data: Vec<u8> = random_u64s(num_blocks * COLUMNS * 2, 2)
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let readers: Vec<(RibbonKernel, Standard128Reader<'_>)> = kernels
            .iter()
            .map(|&k| {
                (
                    k,
                    Standard128Reader::new(&data, num_blocks as u32, 0).with_kernel(k),
                )
            })
            .collect();
        // BinaryFuse8 at ~9 bits a key.
        let fuse_keys = random_u64s(level.bytes * 8 / 9, 3);
        let fuse = BinaryFuse8::try_from(&fuse_keys).expect("BinaryFuse8 builds");
        drop(fuse_keys);
        // Balanced w64 and standalone Standard w128, built, at the cache
        // levels only (half the queries are members).
        let built: Vec<(&str, Ribbon, Vec<u64>)> = if level.name == "DRAM" || standard128_only {
            Vec::new()
        } else {
            [
                ("Balanced w64", Config::balanced(64, 7.0)),
                ("standalone Standard w128", Config::standard(128, 7.0)),
            ]
            .into_iter()
            .map(|(name, config)| {
                let n = level.bytes * 8 / 7;
                let members = random_u64s(n, 4);
                let filter = Ribbon::from_hashes(&members, &config).expect("builds");
                let asked: Vec<u64> = members
                    .iter()
                    .cycle()
                    .take(queries / 2)
                    .copied()
                    .chain(hashes[..queries - queries / 2].iter().copied())
                    .collect::<Vec<_>>();
                // Members and non-members interleaved.
                let mut mixed = Vec::with_capacity(queries);
                for i in 0..queries / 2 {
                    mixed.push(asked[i]);
                    mixed.push(asked[queries / 2 + i]);
                }
                mixed.resize(queries, 0);
                (name, filter, mixed)
            })
            .collect()
        };
        let ring = chase_ring(level.bytes);
        let mut runs: Vec<Run<'_>> = Vec::new();
        for (k, r) in &readers {
            if standard128_only && *k != RibbonKernel::Avx2 {
                continue;
            }
            let hashes = &hashes;
            runs.push((
                format!("Standard128 {k:?} single"),
                Box::new(move |w| hashes[w].iter().filter(|&&h| r.may_match_hash(h)).count()),
            ));
        }
        // The AVX2 query before issue 37's short kernel: the core's query
        // (`InterleavedLayout::filter_query_with`) calling the
        // eight-columns-at-a-time site kernel, the same answers.
        if let Some((_, r)) = readers
            .iter()
            .find(|(k, _)| *k == RibbonKernel::Avx2 && !standard128_only)
        {
            let (hashes, data) = (&hashes, &data);
            let hasher = Hasher::<Standard128>::with_ordinal_seed(r.seed());
            let layout = *r.layout();
            runs.push((
                "Standard128 Avx2 single, site kernel (before)".into(),
                Box::new(move |w| {
                    hashes[w]
                        .iter()
                        .filter(|&&k| {
                            let h = hasher.hash(k);
                            let site = layout.prepare_query(&hasher, h);
                            layout.filter_query_with(RibbonKernel::Avx2, &hasher, h, site, data)
                        })
                        .count()
                }),
            ));
        }
        for (k, r) in &readers {
            if standard128_only && *k != RibbonKernel::Avx2 {
                continue;
            }
            let hashes = &hashes;
            let out = std::cell::RefCell::new(vec![false; queries]);
            runs.push((
                format!("Standard128 {k:?} batched"),
                Box::new(move |w| {
                    let mut o = out.borrow_mut();
                    r.may_match_hashes(&hashes[w.clone()], &mut o[w.clone()]);
                    o[w].iter().filter(|&&m| m).count()
                }),
            ));
        }
        {
            let r = readers.last().map(|(_, r)| r).expect("a kernel");
            let k = readers.last().map(|(k, _)| *k).expect("a kernel");
            let keys = &keys;
            let mut buf = vec![0u64; 256];
            let mut o = vec![false; 256];
            runs.push((
                format!("Standard128 {k:?} batched + hash"),
                Box::new(move |w| {
                    let mut yes = 0;
                    for chunk in keys[w].chunks(256) {
                        for (h, key) in buf.iter_mut().zip(chunk) {
                            *h = get_slice_hash64(key);
                        }
                        r.may_match_hashes(&buf[..chunk.len()], &mut o[..chunk.len()]);
                        yes += o[..chunk.len()].iter().filter(|&&m| m).count();
                    }
                    yes
                }),
            ));
        }
        for (name, filter, mixed) in &built {
            let view = filter.as_ribbon_ref();
            runs.push((
                format!("{name} single"),
                Box::new(move |w| mixed[w].iter().filter(|&&h| view.contains_hash(h)).count()),
            ));
            let out = std::cell::RefCell::new(vec![false; queries]);
            runs.push((
                format!("{name} batched"),
                Box::new(move |w| {
                    let mut o = out.borrow_mut();
                    view.contains_many_hashes_into(&mixed[w.clone()], &mut o[w.clone()]);
                    o[w].iter().filter(|&&m| m).count()
                }),
            ));
        }
        {
            let (fuse, hashes) = (&fuse, &hashes);
            runs.push((
                "xorf BinaryFuse8 single".into(),
                Box::new(move |w| hashes[w].iter().filter(|h| fuse.contains(h)).count()),
            ));
        }
        if !standard128_only {
            let ring = &ring;
            runs.push((
                "pointer chase (dependent loads)".into(),
                Box::new(move |w| {
                    let mut at = w.start * 8 % ring.len();
                    for _ in w {
                        at = ring[at];
                    }
                    at
                }),
            ));
        }
        out.fill(false);
        eprintln!("{}: timing {} rows...", level.name, runs.len());
        let rows = time_rows(&mut runs, window, rounds);
        table.push((format!("{} ({} KiB)", level.name, level.bytes >> 10), rows));
    }
    // Markdown: one column per level.
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.into());
    println!(
        "Kernels available here: {kernels:?}. CPU: {cpu}, {} threads visible. fastest of {rounds} rounds of {window} queries a cell; \
         load average {}.\n",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    print!("| ns/query |");
    for (level, _) in &table {
        print!(" {level} |");
    }
    println!();
    print!("|---|");
    for _ in &table {
        print!("---:|");
    }
    println!();
    let mut labels: Vec<String> = Vec::new();
    for (_, rows) in &table {
        for (l, _) in rows {
            if !labels.contains(l) {
                labels.push(l.clone());
            }
        }
    }
    for label in labels {
        print!("| {label} |");
        for (_, rows) in &table {
            match rows.iter().find(|(l, _)| *l == label) {
                Some((_, ns)) => print!(" {ns:.2} |"),
                None => print!(" — |"),
            }
        }
        println!();
    }
}
