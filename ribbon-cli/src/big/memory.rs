//! Memory budgets: parsing `--memory`, the default, and the peak resident
//! memory the process reached.

use crate::error::Error;

/// Parses a size: a number of bytes with an optional K, M, G or T suffix
/// (powers of 1024; `B` and `iB` accepted after it), e.g. `2G`, `512MiB`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("iB").or_else(|| t.strip_suffix('B')).unwrap_or(t);
    let (num, shift) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&t[..t.len() - 1], 10),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('G') => (&t[..t.len() - 1], 30),
        Some('T') => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a size (e.g. 2G, 512M, 1000000)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !(1.0..1.8e19).contains(&bytes) {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(bytes as u64)
}

/// The default budget: half of the machine's memory (`MemTotal` of
/// `/proc/meminfo`), or 4 GiB where that is unknown.
pub fn default_budget() -> u64 {
    meminfo_total().map_or(4 << 30, |t| t / 2)
}

fn meminfo_total() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The process's peak resident memory (`VmHWM`), where the platform
/// reports it.
pub fn peak_rss() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A counting semaphore over bytes: shards reserve their estimated memory
/// before they load, so the shards built at once fit the budget.
pub struct Budget {
    left: std::sync::Mutex<u64>,
    freed: std::sync::Condvar,
}

impl Budget {
    /// A budget of `bytes`.
    pub fn new(bytes: u64) -> Self {
        Self {
            left: std::sync::Mutex::new(bytes),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Waits until `bytes` are free and takes them; released on drop.
    pub fn take(&self, bytes: u64) -> Result<Reservation<'_>, Error> {
        let poisoned = |_| Error::failed("a shard build panicked");
        let mut left = self.left.lock().map_err(poisoned)?;
        while *left < bytes {
            left = self.freed.wait(left).map_err(poisoned)?;
        }
        *left -= bytes;
        Ok(Reservation { budget: self, bytes })
    }
}

/// Bytes taken from a [`Budget`], given back on drop.
pub struct Reservation<'a> {
    budget: &'a Budget,
    bytes: u64,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if let Ok(mut left) = self.budget.left.lock() {
            *left += self.bytes;
        }
        self.budget.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("x").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1G").is_err());
    }
}
