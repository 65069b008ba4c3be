//! The measurements behind issue 18's targets (not a test: minutes of CPU).
//!
//! ```text
//! cargo run --release -p ribbon-reconcile --example reconcile_report            # IBF and estimator
//! cargo run --release -p ribbon-reconcile --example reconcile_report -- DB_OR_SST # + sketching throughput
//! ```
//!
//! Prints, as Markdown tables: decode success of IBFs of 1.2–1.6 cells per
//! key difference and of [`cells_for_difference`] across d; the strata
//! estimator's accuracy (share within a factor 1.5, median and 5th/95th
//! percentile ratios); and, given an SST file or a DB directory, the
//! sketching throughput over its keys on one core (each run reads the
//! file(s) again; the first run warms the page cache and is not counted).

use ribbon_reconcile::hashing::mix;
use ribbon_reconcile::strata::{DEFAULT_STRATA, DEFAULT_STRATUM_CELLS};
use ribbon_reconcile::{cells_for_difference, Ibf, Sketch, SketchParams, StrataEstimator};
use std::time::Instant;

fn key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&mix(i).to_le_bytes());
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

/// Share of `trials` where an IBF of `cells` cells decodes a difference of
/// `d` keys.
fn success(d: u64, cells: usize, trials: u64) -> f64 {
    let mut ok = 0;
    for t in 0..trials {
        let mut a = Ibf::new(cells, 32, t);
        let base = (t + 1) << 40;
        for i in 0..d {
            if i % 2 == 0 {
                a.insert(&key(base + i));
            } else {
                a.remove(&key(base + i));
            }
        }
        if a.decode().is_ok_and(|x| x.len() as u64 == d) {
            ok += 1;
        }
    }
    ok as f64 / trials as f64
}

fn ibf_table() {
    println!("## IBF decode success (3 hashes, partitioned; trials per row in the last column)\n");
    println!("| d | 1.2 d | 1.3 d | 1.4 d | 1.5 d | cells_for_difference | its cells/d | trials |");
    println!("|---|---|---|---|---|---|---|---|");
    for d in [1u64, 10, 30, 100, 300, 1_000, 3_000, 10_000, 100_000] {
        let trials = match d {
            0..=1_000 => 2_000,
            1_001..=10_000 => 400,
            _ => 100,
        };
        let mut row = format!("| {d} |");
        for f in [1.2, 1.3, 1.4, 1.5] {
            let cells = (d as f64 * f).ceil() as usize;
            row += &format!(" {:.2}% |", 100.0 * success(d, cells, trials));
        }
        let c = cells_for_difference(d);
        row += &format!(
            " {:.2}% | {:.2} | {trials} |",
            100.0 * success(d, c, trials),
            c as f64 / d as f64
        );
        println!("{row}");
    }
    println!();
}

fn estimator_table() {
    println!(
        "## Strata estimator ({DEFAULT_STRATA} strata x {DEFAULT_STRATUM_CELLS} cells), 1,000 trials per row\n"
    );
    println!("| d | within 1.5x | p5 ratio | median ratio | p95 ratio |");
    println!("|---|---|---|---|---|");
    for d in [10u64, 100, 1_000, 10_000, 100_000, 1_000_000] {
        let trials = if d >= 1_000_000 { 200 } else { 1_000 };
        let mut ratios = Vec::new();
        for t in 0..trials {
            let mut a = StrataEstimator::new(DEFAULT_STRATA, DEFAULT_STRATUM_CELLS);
            let mut b = a.clone();
            let base = (t + 1) << 42;
            for i in 0..d {
                if i % 2 == 0 {
                    a.insert_hash(mix(base + i));
                } else {
                    b.insert_hash(mix(base + i));
                }
            }
            ratios.push(a.estimate_difference(&b).unwrap() as f64 / d as f64);
        }
        ratios.sort_by(f64::total_cmp);
        let within = ratios.iter().filter(|&&r| (1.0 / 1.5..=1.5).contains(&r)).count();
        let q = |p: f64| ratios[((ratios.len() - 1) as f64 * p) as usize];
        println!(
            "| {d} | {:.1}% | {:.2} | {:.2} | {:.2} |",
            100.0 * within as f64 / ratios.len() as f64,
            q(0.05),
            q(0.5),
            q(0.95)
        );
    }
    println!();
}

/// Nanoseconds this thread has run on a CPU (Linux's
/// `/proc/thread-self/schedstat`; `None` elsewhere): on a shared machine,
/// keys per second of CPU time is the one-core throughput, where wall time
/// also counts the time other processes held the core.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Runs `f` and returns (its result, wall seconds, CPU seconds of this
/// thread, or the wall seconds where unknown).
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let cpu0 = thread_cpu_ns();
    let start = Instant::now();
    let out = f();
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu0, thread_cpu_ns()) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9,
        _ => wall,
    };
    (out, wall, cpu)
}

fn throughput(path: &str) {
    let p = std::path::Path::new(path);
    let params = SketchParams {
        cells: 1_500,
        ..SketchParams::default()
    };
    let run = || -> Result<(u64, f64, f64), Box<dyn std::error::Error>> {
        let mut s = Sketch::new(params);
        let (r, wall, cpu) = timed(|| -> Result<(), Box<dyn std::error::Error>> {
            if p.is_dir() {
                let db = ribbon_sst::db::Db::open(p)?;
                db.for_each_live_key(|k| s.insert(k))?;
            } else {
                let sst = ribbon_sst::SstFile::open(p)?;
                ribbon_sst::db::for_each_file_key(&sst, |k| s.insert(k))?;
            }
            Ok(())
        });
        r?;
        Ok((s.keys(), wall, cpu))
    };
    if let Err(e) = run() {
        eprintln!("{path}: {e}");
        std::process::exit(1);
    }
    let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
    let mut keys = 0;
    for _ in 0..5 {
        let (k, w, c) = run().unwrap_or((0, f64::MAX, f64::MAX));
        keys = k;
        wall = wall.min(w);
        cpu = cpu.min(c);
    }
    println!(
        "## Sketching throughput, one thread, warm page cache (best of 5; {} IBF cells)\n",
        params.cells
    );
    println!("| source | keys | wall s | M keys/s (wall) | CPU s | M keys/s (CPU) |");
    println!("|---|---|---|---|---|---|");
    let row = |name: &str, keys: u64, wall: f64, cpu: f64| {
        println!(
            "| {name} | {keys} | {wall:.3} | {:.1} | {cpu:.3} | {:.1} |",
            keys as f64 / wall / 1e6,
            keys as f64 / cpu / 1e6
        )
    };
    row(path, keys, wall, cpu);
    if !p.is_dir() {
        // The reading alone: every key walked, none sketched.
        let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            let (n, w, c) = timed(|| {
                let sst = ribbon_sst::SstFile::open(p).ok()?;
                let mut bytes = 0usize;
                let n = ribbon_sst::db::for_each_file_key(&sst, |k| bytes += k.len()).ok()?;
                std::hint::black_box(bytes);
                Some(n)
            });
            if n == Some(keys) {
                wall = wall.min(w);
                cpu = cpu.min(c);
            }
        }
        row("(reading only: the SST's keys, not sketched)", keys, wall, cpu);
    }
    // The same number of keys from memory: the cost of hashing and
    // inserting alone.
    let keys_mem: Vec<[u8; 16]> = (0..keys).map(key).collect();
    let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        let mut s = Sketch::new(params);
        let ((), w, c) = timed(|| keys_mem.iter().for_each(|k| s.insert(k)));
        std::hint::black_box(&s);
        wall = wall.min(w);
        cpu = cpu.min(c);
    }
    row("(16-byte keys from memory)", keys, wall, cpu);
    println!();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        ibf_table();
        estimator_table();
    }
    for a in &args {
        throughput(a);
    }
}
