//! Measures Ribbon space overheads against the paper (Dillinger and Walzer,
//! 2021) and produces the width-32 slot table of `ribbon::standalone::sizing`.
//!
//! ```text
//! cargo run --release -p rocks-ribbon --example space_overhead -- table1 [--quick]
//! cargo run --release -p rocks-ribbon --example space_overhead -- occupancy 32 [--quick]
//! cargo run --release -p rocks-ribbon --example space_overhead -- homogeneous [--quick]
//! cargo run --release -p rocks-ribbon --example space_overhead -- all > ribbon/docs/space-overhead.md
//! ```
//!
//! * `table1`: Standard Ribbon's space overhead `ε = (m - n) / n` for the
//!   paper's Table 1 (m = 2^10, 2^14, 2^17, 2^24; failure probability 0.5,
//!   0.05, 0.001 and "add till failure"), from the distribution of how many
//!   fresh random keys band into `m` slots before the first failure
//!   (`sizing::keys_until_failure`). Banding of `n` keys fails exactly when
//!   fewer than `n` were added before the first failure, so the overhead at
//!   failure probability `p` comes from the `p` quantile of that count.
//! * `occupancy W`: RocksDB's `FindOccupancy` procedure for width `W`:
//!   keys that fit in `2^i` slots at the median, 5th and 0.1th percentile
//!   (failure chance one in 2, 20, 1000), printed as a Rust table, plus the
//!   growth of the overhead factor per doubling beyond `2^17`. For widths 64
//!   and 128 it also prints RocksDB's tables for comparison.
//! * `homogeneous`: Homogeneous Ribbon at n = 10^6 with equation 7's `ε`:
//!   measured FP rate and total space overhead, against the paper's Table 2
//!   (the data of its Figure 5).
//!
//! Trials run on all available cores (`--threads N` to change). Every
//! random choice is seeded, so a run is reproducible.

use ribbon::core::alg::{CoeffRow, RibbonSettings};
use ribbon::core::config::{get_num_to_add, ConstructionFailureChance};
use ribbon::core::hash::split_mix64;
use ribbon::standalone::sizing::{homogeneous_overhead, keys_until_failure, W32_KNOWN_TO_ADD};
use ribbon::standalone::{Config, Ribbon, Settings};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

struct Opts {
    threads: usize,
    quick: bool,
}

/// `trials` counts of keys banded into `num_slots` slots before the first
/// failure, each with fresh keys; sorted.
fn keys_at_failure<S: RibbonSettings>(opts: &Opts, num_slots: u32, trials: usize, stream: u64) -> Vec<u64> {
    let next = AtomicUsize::new(0);
    let mut all: Vec<u64> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..opts.threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let t = next.fetch_add(1, Ordering::Relaxed);
                        if t >= trials {
                            return out;
                        }
                        let mut state = stream ^ (t as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
                        let keys = std::iter::repeat_with(move || split_mix64(&mut state));
                        out.push(keys_until_failure::<S>(num_slots, 0, keys));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    });
    all.sort_unstable();
    all
}

/// The `q` quantile of sorted samples (linear between order statistics).
fn quantile(sorted: &[u64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    let frac = pos - lo as f64;
    sorted[lo] as f64 * (1.0 - frac) + sorted[hi] as f64 * frac
}

/// A distribution-free confidence interval for the `q` quantile: the order
/// statistics `q·T ± z·sqrt(T q (1-q))`.
fn quantile_interval(sorted: &[u64], q: f64, z: f64) -> (f64, f64) {
    let t = sorted.len() as f64;
    let half = z * (t * q * (1.0 - q)).sqrt();
    let at = |pos: f64| sorted[(pos.max(0.0) as usize).min(sorted.len() - 1)] as f64;
    (at(q * t - half - 1.0), at(q * t + half))
}

fn overhead(m: u32, n: f64) -> f64 {
    (f64::from(m) - n) / n
}

/// One cell of Table 1: measured value, 99.9 % interval, paper value.
struct Cell {
    measured: f64,
    interval: (f64, f64),
    paper: Option<&'static str>,
}

impl Cell {
    fn show(&self) -> String {
        let (lo, hi) = self.interval;
        let measured = format!(
            "{:.2}% [{:.2}, {:.2}]",
            self.measured * 100.0,
            lo * 100.0,
            hi * 100.0
        );
        match self.paper {
            Some(p) => format!("{measured} / {p}"),
            None => measured,
        }
    }
}

/// Row labels and their failure probabilities (`None`: add till failure).
const ROWS: [(&str, Option<f64>); 4] = [
    ("0.5", Some(0.5)),
    ("add till failure", None),
    ("0.05", Some(0.05)),
    ("0.001", Some(0.001)),
];

/// The paper's Table 1 for widths 128, 64, 32, in the tool's column order
/// (w/4 smash 2^10, 0 smash 2^10, 2^14, 2^17, 2^24), rows as [`ROWS`].
fn paper_table1(width: u32) -> [[Option<&'static str>; 5]; 4] {
    match width {
        128 => [
            [
                Some("0.1%"),
                Some("1.0%"),
                Some("1.1%"),
                Some("2.2%"),
                Some("4.7%"),
            ],
            [
                Some("0.2%"),
                Some("1.1%"),
                Some("1.2%"),
                Some("2.3%"),
                Some("4.8%"),
            ],
            [
                Some("0.5%"),
                Some("2.2%"),
                Some("2.6%"),
                Some("3.7%"),
                Some("5.9%"),
            ],
            [
                Some("1.2%"),
                Some("4.1%"),
                Some("4.6%"),
                Some("5.8%"),
                Some("> 7%"),
            ],
        ],
        64 => [
            [
                Some("0.4%"),
                Some("2.0%"),
                Some("3.8%"),
                Some("6.3%"),
                Some("11.7%"),
            ],
            [
                Some("0.8%"),
                Some("2.2%"),
                Some("4.1%"),
                Some("6.5%"),
                Some("12.1%"),
            ],
            [
                Some("2.9%"),
                Some("4.8%"),
                Some("7.0%"),
                Some("9.4%"),
                Some("15.0%"),
            ],
            [
                Some("7.1%"),
                Some("9.2%"),
                Some("11.5%"),
                Some("13.8%"),
                Some("> 19%"),
            ],
        ],
        _ => [
            [None; 5],
            [
                Some("5.2%"),
                Some("6.3%"),
                Some("13.2%"),
                Some("19.2%"),
                Some("35.2%"),
            ],
            [None; 5],
            [None; 5],
        ],
    }
}

fn table1_width<C: CoeffRow>(opts: &Opts) {
    let w = C::BITS;
    let columns: [(&str, u32, bool, usize); 5] = if opts.quick {
        [
            ("w/4 smash, 2^10", 10, true, 20_000),
            ("0 smash, 2^10", 10, false, 20_000),
            ("2^14", 14, false, 2_000),
            ("2^17", 17, false, 200),
            ("2^24", 24, false, 0),
        ]
    } else {
        [
            ("w/4 smash, 2^10", 10, true, 200_000),
            ("0 smash, 2^10", 10, false, 200_000),
            ("2^14", 14, false, 20_000),
            ("2^17", 17, false, 3_000),
            ("2^24", 24, false, 100),
        ]
    };
    let paper = paper_table1(w);
    let mut cells: Vec<Vec<String>> = vec![Vec::new(); ROWS.len()];
    let mut trial_note = Vec::new();
    for (c, &(label, log2m, smash, trials)) in columns.iter().enumerate() {
        if trials == 0 {
            cells.iter_mut().for_each(|row| row.push("(skipped)".into()));
            continue;
        }
        let m = 1u32 << log2m;
        let started = Instant::now();
        let stream = u64::from(w) << 40 | u64::from(log2m) << 32 | u64::from(smash);
        let sorted = if smash {
            keys_at_failure::<Settings<C, true, true, false>>(opts, m, trials, stream)
        } else {
            keys_at_failure::<Settings<C, true, false, false>>(opts, m, trials, stream)
        };
        trial_note.push(format!(
            "{label}: {trials} trials, {:.1} s",
            started.elapsed().as_secs_f64()
        ));
        for (r, &(_, p)) in ROWS.iter().enumerate() {
            let cell = match p {
                Some(p) => {
                    // Fewer than 5 samples below the quantile: no estimate.
                    if (trials as f64) * p < 5.0 {
                        cells[r].push(format!("(needs ≥ {} trials)", (5.0 / p).ceil() as u64));
                        continue;
                    }
                    let n = quantile(&sorted, p);
                    // 99.9 % interval (z = 3.29) of the quantile.
                    let (lo, hi) = quantile_interval(&sorted, p, 3.29);
                    Cell {
                        measured: overhead(m, n),
                        interval: (overhead(m, hi), overhead(m, lo)),
                        paper: paper[r][c],
                    }
                }
                None => {
                    let eps: Vec<f64> = sorted.iter().map(|&n| overhead(m, n as f64)).collect();
                    let mean = eps.iter().sum::<f64>() / eps.len() as f64;
                    let var = eps.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (eps.len() - 1) as f64;
                    let half = 3.29 * (var / eps.len() as f64).sqrt();
                    Cell {
                        measured: mean,
                        interval: (mean - half, mean + half),
                        paper: paper[r][c],
                    }
                }
            };
            cells[r].push(cell.show());
        }
    }
    println!("\n### w = {w}\n");
    println!(
        "| failure probability | {} |",
        columns.iter().map(|c| c.0).collect::<Vec<_>>().join(" | ")
    );
    println!("|---|{}", "---|".repeat(columns.len()));
    for (r, &(label, _)) in ROWS.iter().enumerate() {
        println!("| {label} | {} |", cells[r].join(" | "));
    }
    println!("\n{}", trial_note.join("; "));
}

fn table1(opts: &Opts) {
    println!("## Standard Ribbon space overhead (the paper's Table 1)\n");
    println!(
        "Each cell: measured ε = (m − n)/n, its 99.9 % confidence interval, and the paper's value. \
         Rows give the failure probability p per seed: ε at p is the p quantile of the number of fresh \
         random keys banded into m slots before the first failure (first coefficient always one); \
         \"add till failure\" is the mean ε at the first failure. The paper's \"w/4 smash\" is \
         RocksDB's smash (starts spread over w/4 extra positions at each end); its \"w/2 smash\" \
         column is not reproduced. Columns 2^14 and beyond are measured without smash, as \
         RocksDB's filter builds them."
    );
    table1_width::<u128>(opts);
    table1_width::<u64>(opts);
    table1_width::<u32>(opts);
}

fn occupancy_width<C: CoeffRow>(opts: &Opts) {
    let w = C::BITS;
    // The median, 95th and 99.9th percentile: one failure in 2, 20, 1000.
    let chances = ConstructionFailureChance::ALL;
    let quantiles = chances.map(|c| 1.0 / f64::from(c.one_in()));
    println!("\n## Occupancy tables for w = {w} (RocksDB's FindOccupancy procedure)\n");
    println!("```text");
    let mut rust = String::new();
    for smash in [false, true] {
        let min_slots = if smash { w } else { 2 * w };
        let mut rows = vec![[0.0f64; 18]; 3];
        for log2m in 0..18u32 {
            let m = 1u32 << log2m;
            if m < min_slots {
                continue;
            }
            let trials = if opts.quick { 2_000 } else { 20_000 };
            let stream = u64::from(w) << 40 | u64::from(log2m) << 32 | u64::from(smash) | 0x100;
            let sorted = if smash {
                keys_at_failure::<Settings<C, true, true, false>>(opts, m, trials, stream)
            } else {
                keys_at_failure::<Settings<C, true, false, false>>(opts, m, trials, stream)
            };
            for (row, &q) in rows.iter_mut().zip(&quantiles) {
                row[log2m as usize] = quantile(&sorted, q);
            }
        }
        rust.push_str(&format!("    // smash: {smash}\n    [\n"));
        for (row, chance) in rows.iter().zip(chances) {
            let cells: Vec<String> = row.iter().map(|v| format!("{v:.1}")).collect();
            rust.push_str(&format!("        // {chance}\n        [{}],\n", cells.join(", ")));
            if w != 32 {
                let rocks: Vec<String> = (0..18)
                    .map(|i| get_num_to_add(chance, w, smash, false, 1 << i).to_string())
                    .collect();
                rust.push_str(&format!("        // RocksDB: [{}]\n", rocks.join(", ")));
            }
        }
        rust.push_str("    ],\n");
    }
    print!("{rust}");
    println!("```");

    // Growth of the overhead factor per doubling beyond 2^17 (one in 20).
    let mut factors = Vec::new();
    for log2m in 17u32..=(if opts.quick { 18 } else { 20 }) {
        let m = 1u32 << log2m;
        let trials = if opts.quick { 100 } else { 1_000 };
        let stream = u64::from(w) << 40 | u64::from(log2m) << 32 | 0x200;
        let sorted = keys_at_failure::<Settings<C, true, false, false>>(opts, m, trials, stream);
        factors.push((log2m, f64::from(m) / quantile(&sorted, 0.05)));
    }
    let (first, last) = (factors[0], factors[factors.len() - 1]);
    let per_doubling = (last.1 - first.1) / f64::from(last.0 - first.0);
    println!(
        "\nOverhead factor (slots per key, one in 20, no smash): {}; growth per doubling {per_doubling:.4}",
        factors
            .iter()
            .map(|(l, f)| format!("2^{l}: {f:.4}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if w == 32 {
        println!(
            "\nCurrently in `sizing.rs` (one in 20, no smash): {:?}",
            W32_KNOWN_TO_ADD[0][1]
        );
    }
}

/// The paper's Table 2 Homogeneous Ribbon overheads (n = 10^6): (w, r, %).
const PAPER_HOMOGENEOUS: [(u32, u32, f64); 9] = [
    (32, 3, 16.1),
    (64, 3, 8.0),
    (128, 3, 4.2),
    (32, 7, 20.6),
    (64, 7, 10.1),
    (128, 7, 5.1),
    (32, 11, 28.0),
    (64, 11, 12.7),
    (128, 11, 7.3),
];

fn homogeneous(opts: &Opts) {
    println!("\n## Homogeneous Ribbon at n = 10^6 (the paper's Figure 5 / Table 2)\n");
    println!(
        "Slots from equation 7, ε = (4 + r/4)/w; FP rate measured with random non-member hashes; \
         overhead = bits per key / log2(1/f) − 1 (the paper's r(1 + ε)/log2(1/f) − 1). Mean over \
         {KEY_SETS} key sets, with the range between them. The paper's Table 2 gives one measurement \
         per configuration (the data of Figure 5, which plots them).\n"
    );
    println!(
        "| w | r | ε (eq. 7) | bits/key | FP rate / 2^-r (range) | overhead (range) | paper (Table 2) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let n = 1_000_000u64;
    let queries = if opts.quick { 2_000_000 } else { 40_000_000 };
    for &(w, r, paper) in &PAPER_HOMOGENEOUS {
        let config = Config::homogeneous(w, f64::from(r));
        let mut ratios = Vec::new();
        let mut overheads = Vec::new();
        let mut bits_per_key = 0.0;
        for set in 0..KEY_SETS {
            let mut s = 0x5EED ^ (set << 32) ^ u64::from(w * 100 + r);
            let keys: Vec<u64> = (0..n).map(|_| split_mix64(&mut s)).collect();
            let filter = Ribbon::from_hashes(&keys, &config).expect("homogeneous never fails");
            let fp = filter.measure_fp_rate(queries, 0xF00D + set);
            ratios.push(fp / (-f64::from(r)).exp2());
            overheads.push(filter.space_overhead_at(fp) * 100.0);
            bits_per_key = filter.bits_per_key();
        }
        let stats = |v: &[f64]| {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let min = v.iter().copied().fold(f64::INFINITY, f64::min);
            let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (mean, min, max)
        };
        let (rm, rlo, rhi) = stats(&ratios);
        let (om, olo, ohi) = stats(&overheads);
        println!(
            "| {w} | {r} | {:.2}% | {bits_per_key:.3} | {rm:.4} ({rlo:.4} – {rhi:.4}) | {om:.2}% ({olo:.2} – {ohi:.2}) | {paper}% |",
            homogeneous_overhead(w, f64::from(r)) * 100.0,
        );
    }
    println!("\n{queries} queries per filter.");
}

/// Key sets per Homogeneous configuration.
const KEY_SETS: u64 = 4;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = Opts {
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        quick: args.iter().any(|a| a == "--quick"),
    };
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        opts.threads = args.get(i + 1).and_then(|v| v.parse().ok()).expect("--threads N");
    }
    let started = Instant::now();
    match args.first().map(String::as_str) {
        Some("table1") => table1(&opts),
        Some("occupancy") => match args.get(1).map(String::as_str) {
            Some("32") => occupancy_width::<u32>(&opts),
            Some("64") => occupancy_width::<u64>(&opts),
            Some("128") => occupancy_width::<u128>(&opts),
            _ => eprintln!("usage: occupancy 32|64|128"),
        },
        Some("homogeneous") => homogeneous(&opts),
        Some("all") => {
            println!("# Ribbon space overheads, measured\n");
            println!(
                "Produced by `cargo run --release -p rocks-ribbon --example space_overhead -- all` \
                 ({} threads).\n",
                opts.threads
            );
            table1(&opts);
            homogeneous(&opts);
            occupancy_width::<u32>(&opts);
        }
        _ => {
            eprintln!("usage: space_overhead table1|occupancy W|homogeneous|all [--quick] [--threads N]");
            std::process::exit(2);
        }
    }
    eprintln!("done in {:.1} s", started.elapsed().as_secs_f64());
}
