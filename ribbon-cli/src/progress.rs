//! Progress bars on standard error, drawn only when standard error is a
//! terminal (never in pipes, files or CI logs).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar over `total` items, hidden unless standard error is a
/// terminal and `total` is at least `min_total`.
pub fn bar(total: u64, min_total: u64, what: &str) -> ProgressBar {
    if total < min_total || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({per_sec}, ETA {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}
