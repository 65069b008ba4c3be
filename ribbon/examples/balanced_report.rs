//! Balanced Ribbon against the paper (Dillinger and Walzer, 2021, section
//! 6): the Balanced rows of Table 2 and the Balanced curve of Figure 5,
//! measured next to Standard and Homogeneous Ribbon on the same keys.
//!
//! ```text
//! cargo run --release -p rocks-ribbon --example balanced_report -- table2 [--quick]
//! cargo run --release -p rocks-ribbon --example balanced_report -- figure5 [--quick]
//! cargo run --release -p rocks-ribbon --example balanced_report -- all > ribbon/docs/balanced-ribbon.md
//! ```
//!
//! * `table2`: n = 10^6 and 10^7 keys (`--quick`: 10^6 only), r = 7, 3
//!   and 11: space overhead (solution and metadata against `log2(1/f)`
//!   bits per key, `f` the configured FP rate, and at the FP rate measured
//!   on 10^7 non-members), construction and query time, for Standard
//!   (w = 64, 128), Homogeneous (w = 64, 128) and Balanced (w = 32, 64,
//!   128) Ribbon, with the paper's numbers beside them, and the two ratios
//!   the issue sets targets for (Balanced w = 64 against Standard w = 128).
//! * `figure5`: space overhead against FP rate for r = 1 ..= 16 at n =
//!   10^6: Balanced and Homogeneous Ribbon of widths 32, 64 and 128 (the
//!   paper's Figure 5 has both), and the paper's `1.005 λ + 0.008` line for
//!   Balanced w = 64.
//!
//! One thread. Times are the fastest of several runs (construction: 3,
//! queries: 5), so that other work on the machine inflates them less; the
//! ratios compare runs made back to back on the same keys. Queries are one
//! `contains_hash` call per key over a shuffled half-member, half-non-member
//! list (the paper's throughput measure), and the same list through
//! `contains_many_hashes` (batches with prefetching). Every random choice is seeded,
//! so sizes and FP rates are reproducible; times are not.

use ribbon::core::hash::split_mix64;
use ribbon::standalone::{Config, Ribbon};
use std::hint::black_box;
use std::time::Instant;

fn keys(n: usize, stream: u64) -> Vec<u64> {
    let mut state = stream;
    (0..n).map(|_| split_mix64(&mut state)).collect()
}

/// One measured configuration.
struct Row {
    overhead: f64,
    measured_overhead: f64,
    fp_ratio: f64,
    bits_per_key: f64,
    build_ns: f64,
    query_ns: f64,
    batched_ns: f64,
}

/// Builds `reps` times (the fastest counts), checks every key, queries
/// `probes` one at a time (fastest of 5) and measures the FP rate.
fn measure(config: &Config, hashes: &[u64], probes: &[u64], fp_queries: u64, reps: usize) -> Row {
    let mut best = f64::INFINITY;
    let mut filter = None;
    for _ in 0..reps {
        let t = Instant::now();
        let f = Ribbon::from_hashes(hashes, config).expect("builds");
        best = best.min(t.elapsed().as_secs_f64());
        filter = Some(f);
    }
    let f = filter.expect("built");
    assert!(
        hashes.iter().all(|&h| f.contains_hash(h)),
        "{config:?}: false negative"
    );
    let mut query_best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        let mut found = 0u64;
        for &p in probes {
            found += u64::from(f.contains_hash(black_box(p)));
        }
        black_box(found);
        query_best = query_best.min(t.elapsed().as_secs_f64());
    }
    let mut batched_best = f64::INFINITY;
    for _ in 0..5 {
        let t = Instant::now();
        let answers = f.contains_many_hashes(black_box(probes));
        black_box(answers);
        batched_best = batched_best.min(t.elapsed().as_secs_f64());
    }
    let fp = f.measure_fp_rate(fp_queries, 0xF00D);
    Row {
        overhead: f.space_overhead(),
        measured_overhead: f.space_overhead_at(fp),
        fp_ratio: fp / f.expected_fp_rate(),
        bits_per_key: f.bits_per_key(),
        build_ns: best * 1e9 / hashes.len() as f64,
        query_ns: query_best * 1e9 / probes.len() as f64,
        batched_ns: batched_best * 1e9 / probes.len() as f64,
    }
}

/// Half members, half non-members, shuffled.
fn probes(hashes: &[u64]) -> Vec<u64> {
    let mut probes = keys(hashes.len() / 2, 2);
    probes.extend_from_slice(&hashes[..hashes.len() / 2]);
    let mut s = 7u64;
    for i in (1..probes.len()).rev() {
        let j = (split_mix64(&mut s) % (i as u64 + 1)) as usize;
        probes.swap(i, j);
    }
    probes
}

/// The paper's Table 2 (space overhead %, construction ns/key, query
/// ns/key at n = 10^6 and 10^8) for a row name and r, where it has one.
fn paper(name: &str, r: f64) -> &'static str {
    match (name, r as u32) {
        ("Standard w=64", 7) => "14;20 / 71 / 42 (10^8: 130 / 94)",
        ("Standard w=128", 7) => "6;8 / 166 / 58 (10^8: 235 / 140)",
        ("Homogeneous w=64", 7) => "10.1 / 83 / 39 (10^8: 160 / 90)",
        ("Homogeneous w=128", 7) => "5.1 / 164 / 53 (10^8: 270 / 145)",
        ("Balanced w=32", 7) => "2.5 / 162 / 48 (10^8: 372 / 107)",
        ("Balanced w=64", 7) => "0.7 / 292 / 49 (10^8: 516 / 111)",
        ("Balanced w=128", 7) => "0.3 / 985 / 66 (10^8: 1335 / 162)",
        ("Standard w=64", 3) => "14;20 / 66 / 22",
        ("Standard w=128", 3) => "6;8 / 145 / 35",
        ("Homogeneous w=64", 3) => "8.0 / 71 / 21",
        ("Homogeneous w=128", 3) => "4.2 / 156 / 33",
        ("Balanced w=32", 3) => "2.8 / 155 / 29",
        ("Balanced w=64", 3) => "0.8 / 288 / 29",
        ("Standard w=64", 11) => "14;20 / 78 / 54",
        ("Standard w=128", 11) => "6;9 / 173 / 71",
        ("Homogeneous w=64", 11) => "12.7 / 89 / 51",
        ("Homogeneous w=128", 11) => "7.3 / 189 / 72",
        ("Balanced w=32", 11) => "2.3 / 169 / 60",
        ("Balanced w=64", 11) => "0.5 / 301 / 61",
        _ => "",
    }
}

fn table2(quick: bool) {
    println!("## Table 2: Balanced Ribbon next to Standard and Homogeneous Ribbon\n");
    println!(
        "Space overhead: solution and Balanced metadata against `log2(1/f)` bits per key, \
         `f` the configured rate (and the rate measured on 10^7 non-members). FP ×2^r: \
         measured FP rate over the configured one. Paper: space % / construction ns/key / \
         query ns/key at n = 10^6 (Table 2, an idle Xeon D-2191).\n"
    );
    let ns: &[usize] = if quick {
        &[1_000_000]
    } else {
        &[1_000_000, 10_000_000]
    };
    let mut ratios = Vec::new();
    for &n in ns {
        let hashes = keys(n, 1);
        let probes = probes(&hashes);
        for r in [7.0, 3.0, 11.0] {
            println!("### n = {n}, r = {r}\n");
            println!("| configuration | space overhead % | at measured FP % | FP / configured | bits/key | build ns/key | query ns/key | batched query ns/key | paper |");
            println!("|---|---:|---:|---:|---:|---:|---:|---:|---|");
            let configs = [
                ("Standard w=64", Config::standard(64, r)),
                ("Standard w=128", Config::standard(128, r)),
                ("Homogeneous w=64", Config::homogeneous(64, r)),
                ("Homogeneous w=128", Config::homogeneous(128, r)),
                ("Balanced w=32", Config::balanced(32, r)),
                ("Balanced w=64", Config::balanced(64, r)),
                ("Balanced w=128", Config::balanced(128, r)),
            ];
            let mut standard128 = None;
            for (name, config) in configs {
                let row = measure(&config, &hashes, &probes, 10_000_000, 3);
                println!(
                    "| {name} | {:.2} | {:.2} | {:.3} | {:.4} | {:.0} | {:.1} | {:.1} | {} |",
                    row.overhead * 100.0,
                    row.measured_overhead * 100.0,
                    row.fp_ratio,
                    row.bits_per_key,
                    row.build_ns,
                    row.query_ns,
                    row.batched_ns,
                    paper(name, r)
                );
                if name == "Standard w=128" {
                    standard128 = Some((row.build_ns, row.query_ns, row.batched_ns));
                }
                if name == "Balanced w=64" {
                    let (b, q, m) = standard128.expect("measured first");
                    ratios.push((n, r, row.build_ns / b, row.query_ns / q, row.batched_ns / m));
                }
            }
            println!();
        }
    }
    println!("### Balanced w=64 against Standard w=128 (same keys, back to back)\n");
    println!(
        "| n | r | construction time ratio (target ≤ 1; paper 1.76) | query time ratio (target ≤ 1.2) \
         | batched query time ratio |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for (n, r, b, q, m) in ratios {
        println!("| {n} | {r} | {b:.2} | {q:.2} | {m:.2} |");
    }
    println!();
}

fn figure5(quick: bool) {
    println!("## Figure 5: space overhead against FP rate (n = 10^6)\n");
    let fp_queries: u64 = if quick { 1_000_000 } else { 10_000_000 };
    println!(
        "Balanced (like Standard) Ribbon's FP rate is the configured one (`FP / conf.`: measured \
         on {fp_queries} non-members over configured), so its overhead is given at the \
         configured rate; Homogeneous Ribbon's rate is higher, and its overhead is given at the \
         measured rate (a sample of few positives above r = 12). Paper, Balanced w=64: \
         `1.005 λ + 0.008` bits per key, an overhead of `0.5% + 0.008 / λ`.\n"
    );
    let hashes = keys(1_000_000, 3);
    println!(
        "| r | paper Balanced w=64 % | Balanced w=32 % | Balanced w=64 % | Balanced w=128 % | \
         FP / conf. (w=32, 64, 128) | Homogeneous w=32 % | Homogeneous w=64 % | Homogeneous w=128 % |"
    );
    println!("|---:|---:|---:|---:|---:|---|---:|---:|---:|");
    let rs: &[f64] = if quick {
        &[1.0, 3.0, 7.0, 11.0, 16.0]
    } else {
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0, 12.0, 14.0, 16.0]
    };
    for &r in rs {
        let mut cells = vec![format!("{:.2}", (0.005 + 0.008 / r) * 100.0)];
        let mut ratios = Vec::new();
        for w in [32, 64, 128] {
            let f = Ribbon::from_hashes(&hashes, &Config::balanced(w, r)).expect("builds");
            cells.push(format!("{:.2}", f.space_overhead() * 100.0));
            let fp = f.measure_fp_rate(fp_queries, 0xBEEF);
            ratios.push(format!("{:.3}", fp / f.expected_fp_rate()));
        }
        cells.push(ratios.join(", "));
        for w in [32, 64, 128] {
            let f = Ribbon::from_hashes(&hashes, &Config::homogeneous(w, r)).expect("builds");
            let fp = f.measure_fp_rate(fp_queries, 0xBEEF);
            cells.push(format!("{:.2}", f.space_overhead_at(fp) * 100.0));
        }
        println!("| {r} | {} |", cells.join(" | "));
    }
    println!();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let what = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or("all", String::as_str);
    if what == "all" {
        println!("# Balanced Ribbon: measured against the paper\n");
        println!(
            "Generated by `cargo run --release -p rocks-ribbon --example balanced_report -- all > \
             ribbon/docs/balanced-ribbon.md` (see the example's docs). Timings depend on the \
             machine and its load; sizes and FP rates are reproducible.\n"
        );
    }
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "unknown".into())
    };
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "Load average (1, 5, 15 min) at the start: {} on {cores} cores.\n",
        load()
    );
    match what {
        "table2" => table2(quick),
        "figure5" => figure5(quick),
        "all" => {
            table2(quick);
            figure5(quick);
        }
        other => {
            eprintln!("unknown report {other:?}: table2, figure5 or all");
            std::process::exit(2);
        }
    }
    println!("Load average at the end: {}.", load());
}
