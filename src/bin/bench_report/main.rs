//! The benchmark report: reads the criterion results of `cargo bench --bench
//! filters`, adds what criterion does not measure (peak construction memory
//! per build in a child process, bits/key and FP rates on 10^6 non-members,
//! and a DB-level run through the bridge), and prints every ratio
//! Rust/RocksDB-C++ next to its target. Writes `docs/benchmarks.md` and the
//! plot `docs/build-ns-per-key.svg`.
//!
//! ```text
//! bash scripts/bench.sh            # cargo bench + this report
//! cargo run --release --bin bench-report [-- --skip-db]
//! cargo run --release --bin bench-report -- --balanced-policy   # issue 15 only
//! cargo run --release --bin bench-report -- --db-only            # the DB rows only
//! ```

use ribbon::rocksdb::format::FilterReader;
use ribbon::test_support::keys::{member_keys, KeyKind};
use ribbon_compat::harness::{build_packed, NativeBuilder, NativeReader, Reason};
use ribbon_compat::packed::{build_rust, PackedKeys};
use ribbon_compat::proc_status::status_kib;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

mod args;
mod criterion;
mod plot;
mod table;

use args::{Args, Mode, Side};
use clap::Parser;
use criterion::{criterion_dir, median_ns};
use plot::svg_plot;
use table::{db_floor_table, series_table, RatioTable, Series, BUILD_SIZES};

extern "C" {
    /// glibc: returns free heap memory to the system.
    fn malloc_trim(pad: usize) -> i32;
}

/// In a child process: peak RSS growth (bytes) of one build.
fn child_memory(which: &str, n: usize) {
    let keys = PackedKeys::new(&member_keys(KeyKind::Binary16To24, n, 1));
    // SAFETY: malloc_trim only releases free memory of the process's own
    // allocator; no pointer is passed. Without it, the freed key-generation
    // memory would absorb (and hide) the builders' small allocations.
    unsafe {
        malloc_trim(0);
    }
    // Reset the peak-RSS counter (VmHWM) to the current RSS, so the peak
    // of key generation does not count.
    // The section's policies go through RocksDB's builder API; register
    // the Rust ids first, so that registration does not count.
    let through_rocksdb = SECTION_POLICIES.iter().find(|p| p.which == which);
    if through_rocksdb.is_some() {
        rocks_bridge::register();
    }
    std::fs::write("/proc/self/clear_refs", "5").expect("reset VmHWM via /proc/self/clear_refs");
    let before = status_kib("VmRSS:");
    let filter = match (which, through_rocksdb) {
        (_, Some(p)) => build_through_rocksdb(p.policy, &keys),
        ("rust", None) => build_rust("ribbonfilter:10", 7, &keys),
        _ => build_packed("ribbonfilter:10", 7, &keys),
    };
    let peak = status_kib("VmHWM:");
    println!("{}", (peak.saturating_sub(before)) * 1024);
    std::hint::black_box(filter);
}

/// Peak construction memory in bits/key of one build of `n` keys by the
/// `child-memory` variant `which`: the median of 3 child processes.
fn child_memory_bits_per_key(which: &str, n: usize) -> f64 {
    let exe = std::env::current_exe().unwrap();
    let mut samples: Vec<f64> = (0..3)
        .map(|_| {
            let out = std::process::Command::new(&exe)
                .args(["child-memory", which, &n.to_string()])
                .output()
                .expect("run child");
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<f64>()
                .unwrap_or(f64::NAN)
                * 8.0
                / n as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[1]
}

fn measure_memory(n: usize) -> (f64, f64) {
    (
        child_memory_bits_per_key("rust", n),
        child_memory_bits_per_key("rocksdb", n),
    )
}

/// One filter of the Balanced Ribbon section (issue 15).
struct SectionPolicy {
    /// The row's name.
    label: &'static str,
    /// The policy id RocksDB's `FilterPolicy::CreateFromString` is given.
    policy: &'static str,
    /// The policy id the reader is created from (`NativeReader::for_policy`),
    /// or `None` for RocksDB's built-in reader (`NativeReader::new`).
    reader: Option<&'static str>,
    /// The `child-memory` variant that builds it.
    which: &'static str,
}

/// RocksDB's Ribbon first (the baseline of every ratio), then
/// `rust.BalancedRibbon` (the ratios' numerator), then `rust.RibbonFilter`
/// (for reference: RocksDB's format, built by Rust).
const SECTION_POLICIES: [SectionPolicy; 3] = [
    SectionPolicy {
        label: "RocksDB `ribbonfilter:10` (C++)",
        policy: "ribbonfilter:10",
        reader: None,
        which: "rocksdb-builder",
    },
    SectionPolicy {
        label: "`rust.BalancedRibbon:10`",
        policy: "rust.BalancedRibbon:10",
        reader: Some("rust.BalancedRibbon:10"),
        which: "balanced",
    },
    SectionPolicy {
        label: "`rust.RibbonFilter:10`",
        policy: "rust.RibbonFilter:10",
        reader: Some("rust.RibbonFilter:10"),
        which: "rust-builder",
    },
];

/// Builds a filter block of `keys` through RocksDB's builder API, as the
/// block-based table builder drives it: the builder `policy` creates for a
/// compaction output at level 1 of a `format_version = 7` table (RocksDB's
/// default table options), one `AddKey` per key, then `Finish`. Panics when
/// RocksDB does not know `policy` or it builds no filter there.
fn build_through_rocksdb(policy: &str, keys: &PackedKeys) -> Vec<u8> {
    rocks_bridge::register();
    let mut b =
        NativeBuilder::new(policy, 7, Reason::Compaction, 1).unwrap_or_else(|e| panic!("{policy}: {e}"));
    assert!(b.has_builder(), "{policy} builds no filter");
    for k in keys.iter() {
        b.add_key(k);
    }
    b.finish()
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// What the section measures of one filter at one n.
struct SectionRow {
    bits_per_key: f64,
    fp_rate: f64,
    build_ns: f64,
    memory_bits_per_key: f64,
    single_ns: f64,
    batched_ns: f64,
}

/// The Balanced Ribbon section (issue 15): every filter of
/// [`SECTION_POLICIES`] built and queried through RocksDB's API in this
/// process, at n = 10^6 and 10^7, with the issue's targets. Returns the
/// section's markdown.
fn balanced_section() -> String {
    rocks_bridge::register();
    let probes = PackedKeys::new(&member_keys(KeyKind::Binary16To24, 1_000_000, 2));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## `rust.BalancedRibbon:10` against RocksDB's `ribbonfilter:10` (issue 15)\n\n\
         Every filter is built through RocksDB's builder API (`FilterPolicy::CreateFromString`, \
         the builder for a compaction output at level 1, format_version 7, one `AddKey` per key, \
         `Finish`) and queried through the reader its policy creates, all in this process. \
         Keys: `Binary16To24`, seed 1; probes: 10^6 non-members, seed 2. Build: median of 5 runs, \
         the filters alternating run by run. Memory: peak RSS growth of one build in a child \
         process, median of 3. Queries: the 10^6 probes, one by one (`MayMatch`) or in MultiGet \
         batches of 32, median of 5 rounds, the filters alternating as in the builds. Load average at the start: {}.\n",
        load.join(" ")
    );
    let mut table = RatioTable::new();
    for n in [1_000_000usize, 10_000_000] {
        eprintln!("balanced-policy section, n = {n}...");
        let members = PackedKeys::new(&member_keys(KeyKind::Binary16To24, n, 1));
        let mut build_ns: Vec<Vec<f64>> = vec![Vec::new(); SECTION_POLICIES.len()];
        let mut blocks: Vec<Vec<u8>> = vec![Vec::new(); SECTION_POLICIES.len()];
        for run in 0..5 {
            // Alternate the order run by run: forward, then backward.
            let mut order: Vec<usize> = (0..SECTION_POLICIES.len()).collect();
            if run % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let t = Instant::now();
                let block = build_through_rocksdb(SECTION_POLICIES[i].policy, &members);
                build_ns[i].push(t.elapsed().as_secs_f64() * 1e9 / n as f64);
                if run > 0 {
                    assert_eq!(block, blocks[i], "{}: builds differ", SECTION_POLICIES[i].policy);
                }
                blocks[i] = block;
            }
        }
        let readers: Vec<NativeReader> = SECTION_POLICIES
            .iter()
            .zip(&blocks)
            .map(|(p, block)| {
                let reader = match p.reader {
                    None => NativeReader::new(block),
                    Some(id) => NativeReader::for_policy(id, block).unwrap_or_else(|e| panic!("{id}: {e}")),
                };
                assert_eq!(
                    reader.count_matches(&members, true),
                    n,
                    "{}: a member key does not match",
                    p.policy
                );
                reader
            })
            .collect();
        // Queries: 5 rounds, the filters alternating round by round as the
        // builds do, each timing one pass one by one and one batched.
        let mut query_ns: Vec<[Vec<f64>; 2]> = vec![[Vec::new(), Vec::new()]; SECTION_POLICIES.len()];
        let mut fps: Vec<[usize; 2]> = vec![[0; 2]; SECTION_POLICIES.len()];
        for round in 0..5 {
            let mut order: Vec<usize> = (0..SECTION_POLICIES.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                for batched in [false, true] {
                    let t = Instant::now();
                    let matches = std::hint::black_box(readers[i].count_matches(&probes, batched));
                    query_ns[i][usize::from(batched)]
                        .push(t.elapsed().as_secs_f64() * 1e9 / probes.ends.len() as f64);
                    fps[i][usize::from(batched)] = matches;
                }
            }
        }
        let rows: Vec<SectionRow> = SECTION_POLICIES
            .iter()
            .zip(blocks.iter().zip(build_ns))
            .zip(query_ns.into_iter().zip(fps))
            .map(|((p, (block, build)), ([single, batched], fps))| {
                assert_eq!(fps[0], fps[1], "{}: single and batched answers differ", p.policy);
                SectionRow {
                    bits_per_key: block.len() as f64 * 8.0 / n as f64,
                    fp_rate: fps[0] as f64 / probes.ends.len() as f64,
                    build_ns: median(build),
                    memory_bits_per_key: child_memory_bits_per_key(p.which, n),
                    single_ns: median(single),
                    batched_ns: median(batched),
                }
            })
            .collect();
        let _ = writeln!(
            out,
            "\n| n = {n} | bits/key | FP rate | build ns/key | peak construction memory bits/key | single query ns/key | batched query ns/key |\n|---|---|---|---|---|---|---|"
        );
        for (p, r) in SECTION_POLICIES.iter().zip(&rows) {
            let _ = writeln!(
                out,
                "| {} | {:.2} | {:.3}% | {:.1} | {:.1} | {:.1} | {:.1} |",
                p.label,
                r.bits_per_key,
                r.fp_rate * 100.0,
                r.build_ns,
                r.memory_bits_per_key,
                r.single_ns,
                r.batched_ns
            );
        }
        let (cpp, bal) = (&rows[0], &rows[1]);
        table.absolute(
            &format!("Balanced bits/key, n = {n}"),
            bal.bits_per_key,
            cpp.bits_per_key,
            "bits/key",
            6.80,
        );
        table.within(
            &format!("Balanced FP rate, n = {n}"),
            bal.fp_rate * 100.0,
            cpp.fp_rate * 100.0,
            "%",
            0.05,
        );
        for (what, b, c, unit, target) in [
            ("build", bal.build_ns, cpp.build_ns, "ns/key", 1.0),
            (
                "peak construction memory",
                bal.memory_bits_per_key,
                cpp.memory_bits_per_key,
                "bits/key",
                0.4,
            ),
            ("single query", bal.single_ns, cpp.single_ns, "ns/key", 1.2),
            ("batched query", bal.batched_ns, cpp.batched_ns, "ns/key", 1.2),
        ] {
            table.row(&format!("Balanced {what}, n = {n}"), b, c, unit, target);
        }
    }
    let _ = writeln!(
        out,
        "\nTargets of issue 15, `rust.BalancedRibbon:10` (the Rust column) against RocksDB's \
         `ribbonfilter:10` (the C++ column):\n\n{}",
        table.out
    );
    out
}

fn fp_and_bits(n: usize) -> Vec<(String, f64, f64)> {
    let members = PackedKeys::new(&member_keys(KeyKind::Binary16To24, n, 1));
    let probes = PackedKeys::new(&member_keys(KeyKind::Binary16To24, 1_000_000, 2));
    let mut rows = Vec::new();
    for (name, policy) in [("ribbon", "ribbonfilter:10"), ("bloom", "bloomfilter:10")] {
        let rust = build_rust(policy, 7, &members);
        let native = build_packed(policy, 7, &members);
        assert_eq!(rust, native, "{policy}: bytes differ");
        let r = FilterReader::new(&rust);
        let fps = probes.iter().filter(|k| r.may_match(k)).count();
        let native_fps = NativeReader::new(&native).count_matches(&probes, false);
        assert_eq!(fps, native_fps);
        rows.push((
            format!("rust/rocksdb {name} (identical bytes)"),
            rust.len() as f64 * 8.0 / n as f64,
            fps as f64 / 1e6,
        ));
    }
    let hashes: Vec<u64> = members.iter().map(ribbon::core::hash::get_slice_hash64).collect();
    let xor = xorf::BinaryFuse8::try_from(&hashes).unwrap();
    use xorf::Filter as _;
    let fps = probes
        .iter()
        .filter(|k| xor.contains(&ribbon::core::hash::get_slice_hash64(k)))
        .count();
    rows.push((
        "xorf BinaryFuse8".into(),
        xor.fingerprints.len() as f64 * 8.0 / n as f64,
        fps as f64 / 1e6,
    ));
    let mut fb = fastbloom::BloomFilter::with_num_bits(n * 10).expected_items(n);
    for k in members.iter() {
        fb.insert(k);
    }
    let fps = probes.iter().filter(|k| fb.contains(k)).count();
    rows.push((
        "fastbloom (10 bits/key)".into(),
        fb.num_bits() as f64 / n as f64,
        fps as f64 / 1e6,
    ));
    rows
}

/// Fill + compact, then 10^6 Gets of absent and of present keys, through a
/// real DB with the native policy, with the Rust one, and with no filter
/// at all (each side first in one round, best of 3). Returns (fill+compact
/// s, absent Get s, present Get s) for `rocksdb`, `rust` and `none`.
///
/// The `none` side is the floor of any filter's fill and present Gets:
/// what the database costs without building or asking a filter.
fn db_bench() -> BTreeMap<&'static str, [f64; 3]> {
    use rocksdb::{BlockBasedOptions, Options, DB};
    const N: u64 = 1_000_000;
    let key = |i: u64| format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes();
    let absent = |i: u64| format!("{:016x}!", i.wrapping_mul(0xD1B5_4A32_D192_ED03)).into_bytes();
    let mut best: BTreeMap<&'static str, [f64; 3]> = BTreeMap::new();
    for round in 0..3 {
        // Rotate the order round by round: each side goes first once.
        let mut sides = [
            ("rocksdb", Some("ribbonfilter:10:-1")),
            ("rust", Some("rust.RibbonFilter:10:-1")),
            ("none", None),
        ];
        sides.rotate_left(round % 3);
        for (name, policy) in sides {
            let dir = tempfile::tempdir().unwrap();
            let mut table = BlockBasedOptions::default();
            table.set_format_version(7);
            let mut opts = Options::default();
            opts.create_if_missing(true);
            opts.set_block_based_table_factory(&table);
            if let Some(policy) = policy {
                rocks_bridge::set_filter_policy(&mut opts, policy).unwrap();
            }
            let db = DB::open(&opts, dir.path()).unwrap();
            let t = Instant::now();
            for i in 0..N {
                db.put(key(i), b"value").unwrap();
            }
            db.flush().unwrap();
            db.compact_range::<&[u8], &[u8]>(None, None);
            let fill = t.elapsed().as_secs_f64();
            let t = Instant::now();
            for i in 0..N {
                std::hint::black_box(db.get(absent(i)).unwrap());
            }
            let get_absent = t.elapsed().as_secs_f64();
            let t = Instant::now();
            for i in 0..N {
                std::hint::black_box(db.get(key(i)).unwrap());
            }
            let get_present = t.elapsed().as_secs_f64();
            let e = best.entry(name).or_insert([f64::INFINITY; 3]);
            for (b, v) in e.iter_mut().zip([fill, get_absent, get_present]) {
                *b = b.min(v);
            }
        }
    }
    best
}

/// `Machine: CPU, N cores; flags.` and whether this is the native build.
fn machine_line() -> (String, bool) {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_default();
    let native = std::env::var("RUSTFLAGS")
        .unwrap_or_default()
        .contains("target-cpu");
    let target_cpu = if native {
        "RUSTFLAGS=-Ctarget-cpu=native (Rust, and passed on to RocksDB's C++ by librocksdb-sys)"
    } else {
        "default flags (baseline x86-64 for Rust and C++)"
    };
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    (format!("Machine: {cpu}, {cores} cores; {target_cpu}.\n"), native)
}

/// The build rows (Ribbon and FastLocalBloom by n) and the build series.
fn build_rows(dir: &Path, table: &mut RatioTable) -> Series {
    let mut series = Series::new();
    for n in BUILD_SIZES {
        let group = format!("build/{n}");
        for id in [
            "rust_ribbon",
            "rocksdb_ribbon",
            "rust_bloom",
            "rocksdb_bloom",
            "xorf_binary_fuse8",
            "fastbloom",
        ] {
            if let Some(t) = median_ns(dir, &group, id) {
                series
                    .entry(id.to_string())
                    .or_default()
                    .push((n as f64, t / n as f64));
            }
        }
        // Issue 14's targets: ≤ 0.70 for small filters, ≤ 0.40 at 10^6,
        // ≤ 0.35 from 10^7.
        let ribbon_target = match n {
            0..=100_000 => 0.70,
            100_001..=1_000_000 => 0.40,
            _ => 0.35,
        };
        for (name, rust, cpp, target) in [
            ("Ribbon", "rust_ribbon", "rocksdb_ribbon", ribbon_target),
            ("FastLocalBloom", "rust_bloom", "rocksdb_bloom", 1.0),
        ] {
            if let (Some(r), Some(c)) = (median_ns(dir, &group, rust), median_ns(dir, &group, cpp)) {
                table.row(
                    &format!("{name} build, n = {n}"),
                    r / n as f64,
                    c / n as f64,
                    "ns/key",
                    target,
                );
            }
        }
    }
    series
}

/// The query rows: positive, negative and mixed keys, single and batched.
fn query_rows(dir: &Path, table: &mut RatioTable) {
    for kind in ["positive", "negative", "mixed"] {
        for (mode, target) in [("single", 0.85), ("batched", 0.65)] {
            for f in ["ribbon", "bloom"] {
                let g = format!("query/{kind}/{mode}");
                if let (Some(r), Some(c)) = (
                    median_ns(dir, &g, &format!("rust/{f}")),
                    median_ns(dir, &g, &format!("rocksdb/{f}")),
                ) {
                    table.row(
                        &format!("{f} query {kind} {mode}"),
                        r / 1e5,
                        c / 1e5,
                        "ns/key",
                        target,
                    );
                }
            }
        }
    }
}

/// Batched may-match through `SstFile` against the raw `FilterReader`
/// batch over the same filter blocks (criterion `sst_query/*`).
/// The SstFile rows; returns a note (markdown) on the partitioned one
/// against the raw batch with its grouping by partition timed too, when
/// criterion measured it.
fn sst_query_rows(dir: &Path, table: &mut RatioTable) -> String {
    let mut note = String::new();
    for layout in ["full", "partitioned"] {
        let g = format!("sst_query/{layout}");
        let (Some(s), Some(r)) = (
            median_ns(dir, &g, "sstfile_batch"),
            median_ns(dir, &g, "filter_reader_batch"),
        ) else {
            continue;
        };
        table.row_vs(
            &format!("SstFile batched may-match, {layout} Ribbon filter (vs raw FilterReader batch)"),
            s / 1e5,
            r / 1e5,
            "ns/key",
            1.10,
        );
        // Partitioned only: the raw batch with its grouping timed too.
        if let Some(t) = median_ns(dir, &g, "filter_reader_batch_grouping_timed") {
            let _ = writeln!(
                note,
                "\nThe raw baseline of the partitioned row gets its keys already grouped by partition, \
                 outside the timing; `SstFile` places each key itself. With that grouping timed \
                 (a binary search of the separators per key, as a user of the raw reader would do), \
                 the raw batch takes {:.2} ns/key: `SstFile` ({:.2}) takes {:.2} of it, and {:.2} of \
                 the raw batch alone ({:.2}).",
                t / 1e5,
                s / 1e5,
                s / t,
                s / r,
                r / 1e5
            );
        }
    }
    note
}

/// Peak construction memory, and the database-level rows unless skipped;
/// returns the DB rows' floor table ([`db_floor_table`]; empty when
/// skipped).
fn memory_and_db_rows(table: &mut RatioTable, memory: &mut Series, skip_db: bool) -> String {
    eprintln!("measuring peak construction memory (child processes)...");
    for n in [100_000, 1_000_000, 10_000_000] {
        let (rm, cm) = measure_memory(n);
        memory
            .entry("rust_ribbon".into())
            .or_default()
            .push((n as f64, rm));
        memory
            .entry("rocksdb_ribbon".into())
            .or_default()
            .push((n as f64, cm));
        if n >= 1_000_000 {
            table.row(
                &format!("Ribbon peak construction memory, n = {n} (stretch ≤ 0.60)"),
                rm,
                cm,
                "bits/key",
                0.75,
            );
        }
    }
    if skip_db {
        return String::new();
    }
    eprintln!("running the DB-level benchmark...");
    let db = db_bench();
    let (r, c) = (db["rust"], db["rocksdb"]);
    table.row("DB fill + flush + compaction (10^6 keys)", r[0], c[0], "s", 0.9);
    // Throughput Rust/native >= 1.0, i.e. time Rust/native <= 1.0.
    for (i, what) in [(1, "absent"), (2, "present")] {
        table.row(
            &format!("DB 10^6 Gets of {what} keys (time; throughput ≥ 1.0)"),
            r[i],
            c[i],
            "s",
            1.0,
        );
    }
    db_floor_table(&db)
}

/// The space and FP-rate table of every filter at 10 bits/key.
fn fp_table(out: &mut String) {
    let _ = writeln!(
        out,
        "\n| filter (10 bits/key, n = 10^6) | bits/key | FP rate on 10^6 non-members |\n|---|---|---|"
    );
    for (name, bits, fp) in fp_and_bits(1_000_000) {
        let _ = writeln!(out, "| {name} | {bits:.2} | {:.3}% |", fp * 100.0);
    }
}

/// `docs/benchmarks[-native].md` and the build plot.
fn write_outputs(report: &str, series: Series, memory: Series, suffix: &str) {
    std::fs::create_dir_all("docs").ok();
    std::fs::write(
        format!("docs/benchmarks{suffix}.md"),
        format!("# Benchmark report\n\nGenerated by `bash scripts/bench.sh`.\n\n{report}"),
    )
    .ok();
    let series: Vec<(String, Vec<(f64, f64)>)> = series.into_iter().collect();
    if !series.is_empty() {
        std::fs::write(
            format!("docs/build-ns-per-key{suffix}.svg"),
            svg_plot("Filter build time, ns/key (lower is better)", &series),
        )
        .ok();
        eprintln!("wrote docs/benchmarks{suffix}.md and docs/build-ns-per-key{suffix}.svg");
    }
    let memory: Vec<(String, Vec<(f64, f64)>)> = memory.into_iter().collect();
    if !memory.is_empty() {
        std::fs::write(
            format!("docs/construction-memory{suffix}.svg"),
            svg_plot(
                "Ribbon peak construction memory, bits/key (lower is better)",
                &memory,
            ),
        )
        .ok();
        eprintln!("wrote docs/construction-memory{suffix}.svg");
    }
}

/// `struct rusage` of Linux (x86-64 and aarch64 layout: two timevals, then
/// fourteen longs; `ru_maxrss` in KiB).
#[repr(C)]
#[derive(Default)]
struct RUsage {
    utime: [i64; 2],
    stime: [i64; 2],
    maxrss: i64,
    rest: [i64; 13],
}

extern "C" {
    /// POSIX `wait4`: waits for child `pid` and fills its resource usage.
    fn wait4(pid: i32, status: *mut i32, options: i32, usage: *mut RUsage) -> i32;
}

/// Runs `cmd` to completion; returns whether it exited with 0 and its peak
/// RSS in bytes (`ru_maxrss` of this child alone, from `wait4`).
fn run_measured(cmd: &mut std::process::Command) -> (bool, u64) {
    // Reaped by `wait4` below, not by `Child::wait`.
    #[allow(clippy::zombie_processes)]
    let child = cmd.spawn().expect("spawn");
    let pid = i32::try_from(child.id()).expect("pid fits in pid_t");
    let mut status = 0i32;
    let mut u = RUsage::default();
    // SAFETY: `status` and `u` are live, writable C-layout values; `pid` is
    // our own child, not yet waited for (the `Child` handle never waits).
    let rc = unsafe { wait4(pid, &mut status, 0, &mut u) };
    let exited_ok = rc == pid && status & 0x7f == 0 && (status >> 8) & 0xff == 0;
    (exited_ok, u64::try_from(u.maxrss).unwrap_or(0) * 1024)
}

/// `ribbon sst info DIR` over 1,000 SSTs and `ribbon sst verify` over one
/// multi-GB SST (`RIBBON_BENCH_SST_GB`, default 2), generated here in a
/// temporary directory: files/s, MB/s and the CLI's peak RSS.
fn sst_cli_table(out: &mut String) {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "target".into());
    let ribbon = target.join("release/ribbon");
    if !ribbon.exists() {
        eprintln!("{} not built: skipping the SST CLI benchmark", ribbon.display());
        return;
    }
    let gb: f64 = std::env::var("RIBBON_BENCH_SST_GB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let dir = tempfile::tempdir().expect("temp dir");
    eprintln!(
        "writing 1,000 SSTs and a {gb} GB SST in {}...",
        dir.path().display()
    );
    let many = dir.path().join("many");
    std::fs::create_dir(&many).unwrap();
    let table = "block_based_table_factory={format_version=7;filter_policy=ribbonfilter:10}";
    let opts = |compression: &str| {
        rocksdb::Options::default()
            .get_options_from_string(format!("compression={compression};{table}"))
            .expect("options")
    };
    let small = opts("kLZ4Compression");
    for f in 0..1000u64 {
        let mut w = rocksdb::SstFileWriter::create(&small);
        w.open(many.join(format!("{f:06}.sst"))).unwrap();
        for i in 0..2000u64 {
            let k = format!("{f:06}{i:08x}");
            w.put(k, format!("value {i}")).unwrap();
        }
        w.finish().unwrap();
    }
    let big = dir.path().join("big.sst");
    {
        let big_opts = opts("kNoCompression");
        let mut w = rocksdb::SstFileWriter::create(&big_opts);
        w.open(&big).unwrap();
        let mut value = vec![0u8; 1000];
        let mut state = 7u64;
        let n = (gb * 1e9 / 1024.0) as u64;
        for i in 0..n {
            for chunk in value.chunks_mut(8) {
                let r = ribbon::core::hash::split_mix64(&mut state).to_le_bytes();
                chunk.copy_from_slice(&r[..chunk.len()]);
            }
            w.put(format!("{i:016x}"), &value).unwrap();
        }
        w.finish().unwrap();
    }
    let size = |p: &Path| -> u64 {
        if p.is_dir() {
            std::fs::read_dir(p)
                .unwrap()
                .map(|e| e.unwrap().metadata().unwrap().len())
                .sum()
        } else {
            std::fs::metadata(p).unwrap().len()
        }
    };
    let _ = writeln!(
        out,
        "\n| `ribbon` command | files | MB | s | files/s | MB/s | peak RSS MB |\n|---|---|---|---|---|---|---|"
    );
    for (what, args, files, path) in [
        (
            "sst info DIR (1,000 SSTs)",
            vec!["sst", "info"],
            1000u64,
            many.clone(),
        ),
        (
            "sst verify DIR (1,000 SSTs)",
            vec!["sst", "verify"],
            1000,
            many.clone(),
        ),
        (
            "sst verify FILE (one big SST)",
            vec!["sst", "verify"],
            1,
            big.clone(),
        ),
    ] {
        // Warm the page cache, then time the second run. The command runs
        // under a fresh `bench-report measure` process: a child's peak
        // RSS counts its parent's at spawn time (the child shares the
        // parent's memory until it execs), and this process is large.
        let run = || {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .arg("measure")
                .arg(&ribbon)
                .args(&args)
                .arg(&path)
                .output()
                .expect("run bench-report measure");
            let text = String::from_utf8_lossy(&out.stdout);
            let mut fields = text
                .split_whitespace()
                .map(|f| f.parse::<f64>().unwrap_or(f64::NAN));
            let (secs, rss) = (
                fields.next().unwrap_or(f64::NAN),
                fields.next().unwrap_or(f64::NAN),
            );
            assert!(out.status.success() && secs.is_finite(), "ribbon {args:?} failed");
            (secs, rss as u64)
        };
        run();
        let (secs, rss) = run();
        let mb = size(&path) as f64 / 1e6;
        let _ = writeln!(
            out,
            "| {what} | {files} | {mb:.0} | {secs:.2} | {:.0} | {:.0} | {:.1} |",
            files as f64 / secs,
            mb / secs,
            rss as f64 / 1e6
        );
    }
    let _ = writeln!(
        out,
        "\nPeak RSS is the `ribbon` process's own (`wait4`): files are read one block at \
         a time, on every core for a directory (rayon)."
    );
}

/// `--breakdown N`: where a Rust Ribbon build of N keys spends its time.
fn breakdown(n: usize) {
    use ribbon::core::alg::{Banding, Standard128};
    use ribbon::core::hasher::{sort_by_start, Hasher};
    use ribbon::core::solution::InterleavedLayout;
    let keys = PackedKeys::new(&member_keys(KeyKind::Binary16To24, n, 1));
    let reps = 5;
    let mut t = [0f64; 6];
    for _ in 0..reps {
        let s = Instant::now();
        let mut hashes: Vec<u64> = Vec::new();
        for k in keys.iter() {
            hashes.push(ribbon::core::hash::get_slice_hash64(k));
        }
        t[0] += s.elapsed().as_secs_f64();
        let (len, num_slots) = ribbon::rocksdb::standard128::space_and_slots(n, 101.0, 0, |x| x);
        let hasher = Hasher::<Standard128>::with_ordinal_seed(0);
        let s = Instant::now();
        sort_by_start(&mut hashes, &hasher);
        t[1] += s.elapsed().as_secs_f64();
        let s = Instant::now();
        let mut b = Banding::<Standard128>::new();
        b.reset(num_slots);
        t[2] += s.elapsed().as_secs_f64();
        let s = Instant::now();
        let ns = b.num_starts();
        let ok = b.add_all(hashes.iter().map(|&k| hasher.equation(k, ns)));
        t[3] += s.elapsed().as_secs_f64();
        let s = Instant::now();
        let mut buf = vec![0u8; len];
        InterleavedLayout::<Standard128>::for_num_slots(num_slots, len).back_subst(&b, &mut buf);
        t[4] += s.elapsed().as_secs_f64();
        let s = Instant::now();
        std::hint::black_box(build_rust("ribbonfilter:10", 7, &keys));
        t[5] += s.elapsed().as_secs_f64();
        std::hint::black_box((ok, buf));
    }
    let mut c = 0f64;
    for _ in 0..reps {
        let s = Instant::now();
        std::hint::black_box(build_packed("ribbonfilter:10", 7, &keys));
        c += s.elapsed().as_secs_f64();
    }
    let per = |x: f64| x / reps as f64 / n as f64 * 1e9;
    println!(
        "n={n} ns/key: hash+push {:.1} sort {:.1} banding-alloc {:.1} banding {:.1} backsubst {:.1} | rust total {:.1} rocksdb {:.1}",
        per(t[0]), per(t[1]), per(t[2]), per(t[3]), per(t[4]), per(t[5]), per(c)
    );
}

fn main() {
    let args = Args::parse();
    match args.mode {
        Some(Mode::ChildMemory { which, n }) => return child_memory(&which, n),
        Some(Mode::Measure { command }) => {
            let t = Instant::now();
            let (ok, rss) = run_measured(
                std::process::Command::new(&command[0])
                    .args(&command[1..])
                    .stdout(std::process::Stdio::null()),
            );
            println!("{} {rss}", t.elapsed().as_secs_f64());
            std::process::exit(if ok { 0 } else { 1 });
        }
        Some(Mode::BuildLoop { side, n, reps }) => {
            let keys = PackedKeys::new(&member_keys(KeyKind::Binary16To24, n, 1));
            for _ in 0..reps {
                std::hint::black_box(match side {
                    Side::Rust => build_rust("ribbonfilter:10", 7, &keys),
                    Side::Rocksdb => build_packed("ribbonfilter:10", 7, &keys),
                });
            }
            return;
        }
        Some(Mode::Breakdown { n }) => return breakdown(n),
        None => {}
    }
    if args.db_only {
        let (machine, _) = machine_line();
        let db = db_bench();
        println!("{machine}");
        for (name, [fill, absent, present]) in &db {
            println!(
                "{name}: fill+compaction {fill:.2} s, absent Gets {absent:.2} s, present Gets {present:.2} s"
            );
        }
        print!("{}", db_floor_table(&db));
        return;
    }
    if args.balanced_policy {
        let (machine, _) = machine_line();
        print!("{machine}{}", balanced_section());
        return;
    }
    let dir = criterion_dir();
    let (machine, native) = machine_line();
    let mut table = RatioTable::new();
    let series = build_rows(&dir, &mut table);
    query_rows(&dir, &mut table);
    let sst_note = sst_query_rows(&dir, &mut table);
    let mut memory = Series::new();
    let db_floor = memory_and_db_rows(&mut table, &mut memory, args.skip_db);
    let mut report = format!("{machine}\n{}{sst_note}{db_floor}", table.out);
    fp_table(&mut report);
    series_table(&mut report, &series);
    report.push_str(&balanced_section());
    if !args.skip_sst {
        sst_cli_table(&mut report);
    }
    print!("{report}");
    write_outputs(&report, series, memory, if native { "-native" } else { "" });
}
