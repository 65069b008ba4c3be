//! Running a test's body in a child process under a memory limit
//! (`ulimit -v`) and a CPU-time limit (`ulimit -t`), so that a body that
//! would exhaust memory or time fails its test instead of the whole run.
//! CPU time, not wall-clock time, is what is bounded: a loaded machine
//! (parallel tests, other builds) slows the clock, not the work. A
//! wall-clock backstop of [`WALL_FACTOR`] times the limit catches a body
//! that blocks without using CPU.
//!
//! The test binary re-executes itself for one test (`--exact NAME`) with
//! [`CHILD_ENV`] set to that name; the body then runs in the child.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the child to the name of the test whose body it runs.
pub const CHILD_ENV: &str = "RIBBON_SST_LIMITED_TEST";

/// The limits a body runs under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Virtual memory, in KiB (`ulimit -v`).
    pub memory_kib: u64,
    /// CPU time (`ulimit -t`, rounded up to whole seconds).
    pub time: Duration,
}

/// The wall-clock backstop, as a multiple of [`Limits::time`].
pub const WALL_FACTOR: u32 = 10;

/// Runs `body` in a child process under `limits` when called from the
/// test named `name` (in the parent), or runs it here (in the child).
/// Panics in the parent when the child fails, is killed, or runs out of
/// time. Skipped (with a note) where there is no `sh`.
pub fn run_limited(name: &str, limits: Limits, body: impl FnOnce()) {
    if std::env::var(CHILD_ENV).as_deref() == Ok(name) {
        let start = Instant::now();
        body();
        println!(
            "\n{name}: {:.2} s, peak RSS {} MiB",
            start.elapsed().as_secs_f64(),
            peak_rss_kib() / 1024
        );
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let cpu_seconds = limits.time.as_secs() + u64::from(limits.time.subsec_nanos() > 0);
    let script = format!(
        "ulimit -v {} && ulimit -t {cpu_seconds} && exec \"$0\" \"$@\"",
        limits.memory_kib
    );
    let child = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .arg(&exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        eprintln!("{name}: skipped, no sh to set the memory limit with");
        return;
    };
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            break Some(status);
        }
        if start.elapsed() > limits.time * WALL_FACTOR {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut out = String::new();
    let mut err = String::new();
    let _ = child.stdout.take().map(|mut s| s.read_to_string(&mut out));
    let _ = child.stderr.take().map(|mut s| s.read_to_string(&mut err));
    let report: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with(&format!("{name}: ")))
        .collect();
    match status {
        Some(s) if s.success() && !report.is_empty() => println!("{}", report.join("\n")),
        Some(s) => panic!(
            "{name}: the child failed ({s}) under {} KiB of virtual memory and {cpu_seconds} s of CPU time (a CPU-time kill shows as signal 9 or 24):\n{out}\n{err}",
            limits.memory_kib
        ),
        None => panic!(
            "{name}: the child ran past {:?} of wall-clock time; killed:\n{out}\n{err}",
            limits.time * WALL_FACTOR
        ),
    }
}

/// The process's peak resident set (`VmHWM`), in KiB; 0 where unknown.
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
