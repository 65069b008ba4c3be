//! Running the implementation under test: `sh -c 'COMMAND "$@"' sh ARGS...`,
//! with standard output and error going to files (no pipe can fill up and
//! block it), standard input closed, and a time limit per call after which
//! its whole process group is killed. Nothing here can hang.

use crate::error::Error;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How one call ended.
pub struct Outcome {
    /// `None`: killed after the time limit.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Outcome {
    /// `None` when the call succeeded; otherwise what went wrong, on one
    /// line: the exit status (or the time-out) and the first line of its
    /// standard error.
    pub fn failure(&self, limit: Duration) -> Option<String> {
        let first = self
            .stderr
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        let said = if first.is_empty() {
            String::new()
        } else {
            format!(": {first}")
        };
        match self.status {
            None => Some(format!("timed out after {} s{said}", limit.as_secs())),
            Some(s) if s.success() => None,
            Some(s) => Some(format!("{s}{said}")),
        }
    }
}

/// A scratch directory, removed when dropped.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new() -> Result<Self, Error> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("ribbon-conformance-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::failed(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Self { dir })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes `text` to the scratch file `name` and returns its path.
    pub fn write(&self, name: &str, text: &str) -> Result<PathBuf, Error> {
        let path = self.path(name);
        std::fs::write(&path, text).map_err(|e| crate::error::write_error(&path.display().to_string(), e))?;
        Ok(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The implementation under test.
pub struct Implementation<'a> {
    pub command: &'a str,
    pub limit: Duration,
    pub scratch: &'a Scratch,
}

impl Implementation<'_> {
    /// Runs `COMMAND ARGS...` through `sh -c` and waits at most the limit.
    pub fn call(&self, args: &[&str]) -> Result<Outcome, Error> {
        let out_path = self.scratch.path("stdout");
        let err_path = self.scratch.path("stderr");
        let create = |p: &Path| {
            std::fs::File::create(p).map_err(|e| crate::error::write_error(&p.display().to_string(), e))
        };
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!("{} \"$@\"", self.command))
            .arg("sh")
            .args(args)
            .stdin(Stdio::null())
            .stdout(create(&out_path)?)
            .stderr(create(&err_path)?);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::failed(format!("cannot run sh for --impl: {e}")))?;
        let deadline = Instant::now() + self.limit;
        let mut pause = Duration::from_micros(200);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() >= deadline => {
                    kill_group(child.id());
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(e) => return Err(Error::failed(format!("cannot wait for --impl: {e}"))),
            }
        };
        let stdout = std::fs::read(&out_path).unwrap_or_default();
        let stderr = String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into_owned();
        Ok(Outcome {
            status,
            stdout,
            stderr,
        })
    }
}

/// Kills the process group `pid` leads (the shell and whatever it started).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    #[cfg(not(unix))]
    let _ = pid;
}
