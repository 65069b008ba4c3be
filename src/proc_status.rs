//! This process's memory as Linux reports it (`/proc/self/status`), for
//! the benchmarks' memory columns.

/// The value of `field` (`"VmHWM:"`: peak resident memory, `"VmRSS:"`:
/// resident now) in KiB; 0 where the platform does not report it.
pub fn status_kib(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}
