//! Criterion's results, as `cargo bench` leaves them:
//! `CARGO_TARGET_DIR/criterion/GROUP/ID/new/estimates.json`.

use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Criterion's output directory.
pub fn criterion_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| "target".into());
    target.join("criterion")
}

/// The part of `estimates.json` the report reads.
#[derive(Debug, Deserialize)]
struct Estimates {
    median: Estimate,
}

#[derive(Debug, Deserialize)]
struct Estimate {
    point_estimate: f64,
}

/// The median of an `estimates.json` document, in its unit (ns).
fn parse_median(text: &str) -> Result<f64, serde_json::Error> {
    serde_json::from_str::<Estimates>(text).map(|e| e.median.point_estimate)
}

/// The file criterion writes for benchmark `id` of `group`: a group's
/// directory has `/` replaced by `_`; a function/parameter id is two nested
/// directories.
fn estimates_path(dir: &Path, group: &str, id: &str) -> PathBuf {
    dir.join(group.replace('/', "_"))
        .join(id)
        .join("new/estimates.json")
}

/// Median time in ns of one criterion benchmark, or `None` when it did not
/// run. A file that is there but does not parse is reported on stderr and
/// read as not run.
pub fn median_ns(dir: &Path, group: &str, id: &str) -> Option<f64> {
    let path = estimates_path(dir, group, id);
    let text = std::fs::read_to_string(&path).ok()?;
    parse_median(&text)
        .map_err(|e| eprintln!("{}: {e}", path.display()))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An excerpt of a real `estimates.json` (criterion 0.8).
    const ESTIMATES: &str = r#"{"mean":{"confidence_interval":{"confidence_level":0.95,"lower_bound":41.1,"upper_bound":43.0},"point_estimate":42.0,"standard_error":0.5},"median":{"confidence_interval":{"confidence_level":0.95,"lower_bound":40.2,"upper_bound":41.9},"point_estimate":41.25,"standard_error":0.4},"median_abs_dev":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":1.5,"standard_error":0.1},"slope":null,"std_dev":{"confidence_interval":{"confidence_level":0.95,"lower_bound":2.0,"upper_bound":3.0},"point_estimate":2.5,"standard_error":0.2}}"#;

    #[test]
    fn the_median_is_read_not_the_mean() {
        assert_eq!(parse_median(ESTIMATES).unwrap(), 41.25);
        assert!(parse_median("{}").is_err());
        assert!(parse_median("not json").is_err());
    }

    #[test]
    fn results_are_found_where_criterion_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = estimates_path(dir.path(), "build/ribbon", "rust/1000");
        assert!(path.ends_with("build_ribbon/rust/1000/new/estimates.json"));
        assert_eq!(median_ns(dir.path(), "build/ribbon", "rust/1000"), None);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, ESTIMATES).unwrap();
        assert_eq!(median_ns(dir.path(), "build/ribbon", "rust/1000"), Some(41.25));
        std::fs::write(&path, "{").unwrap();
        assert_eq!(median_ns(dir.path(), "build/ribbon", "rust/1000"), None);
    }
}
