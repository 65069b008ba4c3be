//! Test support: a small SST writer, and running a check in a child
//! process under a memory and time limit.

#![allow(dead_code)]

pub mod child;
pub mod recorded;
pub mod sst_writer;

/// A directory under the system's temporary directory, removed when
/// dropped (also when a test panics).
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    /// `ribbon-sst-NAME-PID`, created.
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("ribbon-sst-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
