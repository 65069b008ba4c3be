//! Running the implementation under test: `sh -c 'COMMAND "$@"' sh ARGS...`,
//! with standard output and error going to files (no pipe can fill up and
//! block it), standard input closed, and a time limit per call after which
//! its whole process group is killed. Nothing here can hang.

use crate::error::Error;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The most standard output one call may print (every answer file of the
/// vectors is far smaller); past it the call fails, and the runner never
/// reads more.
const MAX_STDOUT: u64 = 16 << 20;
/// How much of a call's standard error is read (for its first line).
const MAX_STDERR: u64 = 4 << 10;
/// The largest file one call may write (`ulimit -f`, in 512-byte blocks:
/// 256 MiB), so a runaway implementation cannot fill the disk.
const MAX_FILE_BLOCKS: u64 = 1 << 19;

/// Numbers the calls, so each writes its output to files of its own.
static CALLS: AtomicU64 = AtomicU64::new(0);

/// How one call ended.
pub struct Outcome {
    /// `None`: killed after the time limit.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: String,
    /// A limit of the runner's the call broke (its output is then not
    /// read), whatever its exit status.
    pub broke: Option<String>,
}

impl Outcome {
    /// `None` when the call succeeded; otherwise what went wrong, on one
    /// line: the exit status (or the time-out) and the first line of its
    /// standard error.
    pub fn failure(&self, limit: Duration) -> Option<String> {
        if let Some(broke) = &self.broke {
            return Some(broke.clone());
        }
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
    /// A new directory under the system's temporary directory, created
    /// here (never one that existed before).
    pub fn new() -> Result<Self, Error> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        for attempt in 0u32.. {
            let dir = std::env::temp_dir().join(format!(
                "ribbon-conformance-{}-{nanos}-{attempt}",
                std::process::id()
            ));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Self { dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => continue,
                Err(e) => return Err(Error::failed(format!("cannot create {}: {e}", dir.display()))),
            }
        }
        unreachable!("the loop returns")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Writes `text` to the scratch file `name` and returns its path.
    pub fn write(&self, name: &str, text: &str) -> Result<PathBuf, Error> {
        let path = self.path(name);
        std::io::Write::write_all(&mut fresh_file(&path)?, text.as_bytes())
            .map_err(|e| crate::error::write_error(&path.display().to_string(), e))?;
        Ok(path)
    }
}

/// Creates the scratch file `path` anew: whatever the implementation under
/// test left at that name (a link to a file of the user's, a FIFO) is
/// removed first, never written through, and the file is created
/// exclusively.
fn fresh_file(path: &Path) -> Result<std::fs::File, Error> {
    let err = |e| crate::error::write_error(&path.display().to_string(), e);
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(e)),
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(err)
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
        let n = CALLS.fetch_add(1, Ordering::Relaxed);
        let out_path = self.scratch.path(&format!("stdout-{n}"));
        let err_path = self.scratch.path(&format!("stderr-{n}"));
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                "ulimit -f {MAX_FILE_BLOCKS} 2>/dev/null; {} \"$@\"",
                self.command
            ))
            .arg("sh")
            .args(args)
            .stdin(Stdio::null())
            .stdout(fresh_file(&out_path)?)
            .stderr(fresh_file(&err_path)?);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::failed(format!("cannot run sh for --impl: {e}")))?;
        let deadline = Instant::now() + self.limit;
        let mut pause = Duration::from_micros(200);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    // Whatever it left running in the background goes too.
                    kill_group(child.id());
                    break Some(status);
                }
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
        let stderr = String::from_utf8_lossy(&read_at_most(&err_path, MAX_STDERR)).into_owned();
        let printed = std::fs::metadata(&out_path).map_or(0, |m| m.len());
        let broke = (printed > MAX_STDOUT)
            .then(|| format!("printed {printed} bytes, more than the {MAX_STDOUT} a call may print"));
        let stdout = if broke.is_some() {
            Vec::new()
        } else {
            read_at_most(&out_path, MAX_STDOUT)
        };
        let _ = std::fs::remove_file(&out_path);
        let _ = std::fs::remove_file(&err_path);
        Ok(Outcome {
            status,
            stdout,
            stderr,
            broke,
        })
    }
}

/// The first `max` bytes of the file at `path` (nothing when unreadable,
/// or when the call replaced it with something other than a regular file,
/// such as a FIFO that would never end).
fn read_at_most(path: &Path, max: u64) -> Vec<u8> {
    let mut out = Vec::new();
    if let Ok(f) = crate::input::open_regular(path) {
        let _ = f.take(max).read_to_end(&mut out);
    }
    out
}

/// Kills the process group `pid` leads (the shell and whatever it started),
/// with the shell's own `kill` (no procps needed).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    {
        let _ = Command::new("sh")
            // `-s KILL`: dash's built-in kill reads `-KILL --` as a bad pid.
            .args([
                "-c",
                "kill -s KILL -- \"-$1\" 2>/dev/null",
                "sh",
                &pid.to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    #[cfg(not(unix))]
    let _ = pid;
}
