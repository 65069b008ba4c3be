//! Running the `ribbon` tool of this target directory from a root test.

use std::path::PathBuf;
use std::process::Command;

/// The `ribbon` binary of this target directory, built when missing.
pub fn ribbon() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe.parent().unwrap().parent().unwrap().join("ribbon");
    if !bin.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "-p", "ribbon-cli", "--bin", "ribbon"])
            .status()
            .unwrap();
        assert!(status.success(), "cargo build -p ribbon-cli failed");
    }
    bin
}

/// `ribbon ARGS`' standard output; panics with its error when it fails.
pub fn run(args: &[&str]) -> Vec<u8> {
    let o = Command::new(ribbon()).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "ribbon {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}
