//! A/B timing of the two speed targets of issue #15 (Balanced Ribbon,
//! section 6 of Dillinger and Walzer, 2021): Balanced w = 64 against
//! Standard w = 128 at r = 7, for construction and single-key queries.
//!
//! ```text
//! cargo run --release -p rocks-ribbon --example balanced_ab -- [n ...] [--reps N] [--build-only | --query-only] [--wall]
//! ```
//!
//! For each `n` (default 10^6 and 10^7) both filters are built `reps`
//! times (default 7), alternating Balanced and Standard so that load on a
//! shared machine hits both alike; the medians and the ratio of medians
//! are printed, with the ratio of each interleaved pair (their median too).
//! Queries: a shuffled list of half members, half non-members, one
//! `contains_hash` per key, timed two ways, also interleaved: *throughput*
//! (independent queries, results summed) and *latency* (each query's key
//! depends on the previous answer, so queries cannot overlap).
//!
//! Construction times are the thread's on-CPU time (Linux's
//! `/proc/thread-self/schedstat`), so that time slices lost to other work
//! on a shared machine do not count (`--wall`: wall-clock time); that
//! clock may tick in milliseconds, so each sample builds at least 4
//! million keys. Query times are wall-clock time over chunks of 50,000
//! queries, short enough that few are interrupted.

use ribbon::core::hash::split_mix64;
use ribbon::standalone::{Config, Ribbon};
use std::hint::black_box;
use std::time::Instant;

fn keys(n: usize, stream: u64) -> Vec<u64> {
    let mut state = stream;
    (0..n).map(|_| split_mix64(&mut state)).collect()
}

/// Half members, half non-members, shuffled.
fn probes(hashes: &[u64], count: usize) -> Vec<u64> {
    let mut probes = keys(count / 2, 0xABCD);
    let mut s = 7u64;
    probes
        .extend((0..count - count / 2).map(|_| hashes[(split_mix64(&mut s) % hashes.len() as u64) as usize]));
    for i in (1..probes.len()).rev() {
        let j = (split_mix64(&mut s) % (i as u64 + 1)) as usize;
        probes.swap(i, j);
    }
    probes
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A clock: on-CPU nanoseconds of this thread (the first field of
/// `/proc/thread-self/schedstat`, Linux), which time slices lost to other
/// processes on a shared machine do not inflate; wall-clock nanoseconds
/// where that is not readable or `--wall` was given.
struct Clock {
    wall: bool,
    start: Instant,
}

impl Clock {
    fn on_cpu_ns() -> Option<f64> {
        let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        s.split_whitespace().next()?.parse().ok()
    }

    fn now(&self) -> f64 {
        if !self.wall {
            if let Some(t) = Self::on_cpu_ns() {
                return t;
            }
        }
        self.start.elapsed().as_secs_f64() * 1e9
    }
}

static WALL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn clock() -> Clock {
    Clock {
        wall: WALL.load(std::sync::atomic::Ordering::Relaxed),
        start: Instant::now(),
    }
}

/// Builds the filter of `hashes` enough times for 4 million keys in all
/// (at least once; the on-CPU clock may tick in milliseconds), and returns
/// the time per key and the filter.
fn build_ns(config: &Config, hashes: &[u64]) -> (f64, Ribbon) {
    let times = (4_000_000 / hashes.len()).max(1);
    let c = clock();
    let t = c.now();
    let mut f = Ribbon::from_hashes(hashes, config).expect("builds");
    for _ in 1..times {
        f = Ribbon::from_hashes(hashes, config).expect("builds");
    }
    ((c.now() - t) / (times * hashes.len()) as f64, f)
}

fn throughput_ns(f: &Ribbon, probes: &[u64]) -> f64 {
    let t = Instant::now();
    let mut found = 0u64;
    for &p in probes {
        found += u64::from(f.contains_hash(black_box(p)));
    }
    black_box(found);
    t.elapsed().as_secs_f64() * 1e9 / probes.len() as f64
}

fn latency_ns(f: &Ribbon, probes: &[u64]) -> f64 {
    let t = Instant::now();
    let mut dep = 0u64;
    for &p in probes {
        // `dep` is always 0 (an opaque `false` masks the answer), but the
        // compiler cannot know it: each key waits for the previous answer.
        let hit = f.contains_hash(p ^ dep);
        dep = u64::from(hit) & u64::from(black_box(false));
    }
    black_box(dep);
    t.elapsed().as_secs_f64() * 1e9 / probes.len() as f64
}

/// FNV-1a of the bytes of Balanced filters (widths 32, 64, 128; r = 3,
/// 7, 11; with and without first coefficient always one) for each `n`: equal
/// digests before and after a change to construction show that it writes
/// the same files.
fn print_digests(ns: &[usize]) {
    for &n in ns {
        let hashes = keys(n, 1);
        for w in [32, 64, 128] {
            for r in [3.0, 7.0, 11.0] {
                for first_one in [false, true] {
                    let mut config = Config::balanced(w, r);
                    config.first_coeff_always_one = first_one;
                    let f = Ribbon::from_hashes(&hashes, &config).expect("builds");
                    let d = f.as_bytes().iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                    });
                    println!(
                        "n={n} w={w} r={r} fcao={first_one} len={} digest={d:016x}",
                        f.as_bytes().len()
                    );
                }
            }
        }
    }
}

struct Pairs {
    name: &'static str,
    a: Vec<f64>,
    b: Vec<f64>,
}

impl Pairs {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            a: Vec::new(),
            b: Vec::new(),
        }
    }

    fn print(&mut self, n: usize) {
        let mut ratios: Vec<f64> = self.a.iter().zip(&self.b).map(|(a, b)| a / b).collect();
        let ma = median(&mut self.a);
        let mb = median(&mut self.b);
        println!(
            "n={n:<9} {:<10} balanced64 {ma:7.1} ns  standard128 {mb:7.1} ns  ratio {:.3}  (median of pair ratios {:.3}, min {:.3}, max {:.3})",
            self.name,
            ma / mb,
            median(&mut ratios),
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut reps = 7;
    let mut ns = Vec::new();
    let mut builds = true;
    let mut queries = true;
    let mut digest = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--reps" => reps = it.next().and_then(|r| r.parse().ok()).expect("--reps N"),
            "--build-only" => queries = false,
            "--digest" => digest = true,
            "--wall" => WALL.store(true, std::sync::atomic::Ordering::Relaxed),
            "--query-only" => builds = false,
            n => ns.push(n.parse::<f64>().expect("n") as usize),
        }
    }
    if ns.is_empty() {
        ns = vec![1_000_000, 10_000_000];
    }
    if digest {
        print_digests(&ns);
        return;
    }
    let balanced = Config::balanced(64, 7.0);
    let standard = Config::standard(128, 7.0);
    for n in ns {
        let hashes = keys(n, 1);
        let mut build = Pairs::new("build");
        let mut fb = None;
        let mut fs = None;
        for i in 0..reps.max(1) {
            if !builds && i > 0 {
                break;
            }
            // Alternate which goes first.
            let order = if i % 2 == 0 { [true, false] } else { [false, true] };
            for is_balanced in order {
                if is_balanced {
                    let (t, f) = build_ns(&balanced, &hashes);
                    build.a.push(t);
                    fb = Some(f);
                } else {
                    let (t, f) = build_ns(&standard, &hashes);
                    build.b.push(t);
                    fs = Some(f);
                }
            }
        }
        if builds {
            build.print(n);
        }
        if !queries {
            continue;
        }
        let (fb, fs) = (fb.expect("built"), fs.expect("built"));
        assert!(hashes
            .iter()
            .step_by(97)
            .all(|&h| fb.contains_hash(h) && fs.contains_hash(h)));
        let probes = probes(&hashes, 2_000_000);
        let mut thr = Pairs::new("query");
        let mut lat = Pairs::new("query-dep");
        // Each round alternates the two filters over chunks of 50,000
        // queries, so that a change in load hits both alike; throughput
        // and latency are separate passes over the probes.
        for i in 0..reps.max(5) {
            let mut sums = [0f64; 4];
            for (pass, time) in [(0, throughput_ns as fn(&Ribbon, &[u64]) -> f64), (2, latency_ns)] {
                for (c, chunk) in probes.chunks(50_000).enumerate() {
                    let order = if (i + c) % 2 == 0 {
                        [true, false]
                    } else {
                        [false, true]
                    };
                    for is_balanced in order {
                        let (f, j) = if is_balanced { (&fb, 0) } else { (&fs, 1) };
                        sums[pass + j] += time(f, chunk) * chunk.len() as f64;
                    }
                }
            }
            let per = |x: f64| x / probes.len() as f64;
            thr.a.push(per(sums[0]));
            thr.b.push(per(sums[1]));
            lat.a.push(per(sums[2]));
            lat.b.push(per(sums[3]));
        }
        thr.print(n);
        lat.print(n);
    }
}
