//! Files on disk: the one owner of the two rules every surface of this
//! workspace follows when it reads or writes a file by path (the SST and
//! database readers, the C library, the Python package, the `ribbon`
//! tool).
//!
//! * **Reading** ([`open_regular`], [`read_regular`]): only a regular file
//!   is opened, and opening never blocks. The path's type is checked first
//!   (a FIFO without a writer would block `open(2)` forever; a device such
//!   as `/dev/zero` never ends); the file is then opened with
//!   `O_NONBLOCK`, so that a path swapped for a FIFO between the check and
//!   the open cannot block either, and the opened file is checked again.
//!   A refusal is an [`std::io::Error`] of kind `InvalidInput` whose
//!   message is [`NOT_REGULAR`] ([`is_not_regular`] recognises it).
//! * **Writing** ([`AtomicFile`], [`write_atomic`]): a file is written
//!   whole or not at all, and never through a name someone else planted.
//!   The bytes go to a temporary file created exclusively (`O_EXCL`, a
//!   random name, mode 0600) in the target's directory, which is synced
//!   and renamed over the target once complete; dropped uncommitted, it is
//!   removed. The target must be absent or a regular file: a symbolic
//!   link, a FIFO, a device or a directory there is refused, never
//!   followed or replaced.

use std::fs::{File, Metadata};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The message of a refused non-regular file (see [`open_regular`]).
pub const NOT_REGULAR: &str = "not a regular file (a FIFO, device, socket or directory): refused";

/// The message of a refused output target (see [`AtomicFile::create`]).
pub const NOT_REPLACEABLE: &str =
    "it exists and is not a regular file (a symbolic link, FIFO, device or directory): refusing to replace it";

/// The error of a non-regular file: kind `InvalidInput`, message
/// [`NOT_REGULAR`].
fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, NOT_REGULAR)
}

/// Whether `e` is [`open_regular`]'s (or [`read_regular`]'s) refusal of a
/// file that is not regular.
pub fn is_not_regular(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::InvalidInput
        && e.get_ref().is_some_and(|inner| inner.to_string() == NOT_REGULAR)
}

/// Whether `e` is [`AtomicFile`]'s refusal of a target that exists and is
/// not a regular file.
pub fn is_not_replaceable(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::AlreadyExists
        && e.get_ref()
            .is_some_and(|inner| inner.to_string() == NOT_REPLACEABLE)
}

/// Opens `path` for reading; it must be a regular file (following
/// symbolic links), checked before it is opened and again on the open
/// file, and the open never blocks (see the module docs). Returns the file
/// and its metadata.
pub fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    restore_blocking(&file)?;
    Ok((file, meta))
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Clears the `O_NONBLOCK` the file was opened with (a regular file
/// ignores it; cleared so that the file behaves as a plain open's would).
#[cfg(unix)]
fn restore_blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is the open descriptor `file` owns for this call;
    // F_GETFL reads its status flags and touches no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above; F_SETFL changes only the status flags.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(unix))]
fn restore_blocking(_file: &File) -> io::Result<()> {
    Ok(())
}

/// Reads the regular file at `path` whole ([`open_regular`]). A file of
/// more than `max` bytes is an error of kind `InvalidData`; a buffer that
/// cannot be allocated is an error of kind `OutOfMemory` (never an abort).
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let (file, meta) = open_regular(path)?;
    let len = meta.len();
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{len} bytes, more than the bound of {max}"),
        ));
    }
    let mut bytes = Vec::new();
    let want = usize::try_from(len).map_err(|_| out_of_memory(len))?;
    bytes.try_reserve_exact(want).map_err(|_| out_of_memory(len))?;
    // At most `max` bytes, even from a file that grew since.
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The error of a buffer of `len` bytes that could not be allocated.
fn out_of_memory(len: u64) -> io::Error {
    io::Error::new(io::ErrorKind::OutOfMemory, format!("cannot allocate {len} bytes"))
}

/// Refuses a target that exists and is not a regular file (a symbolic link
/// is not followed: it is refused too).
pub fn check_replaceable(target: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(target) {
        Ok(m) if !m.file_type().is_file() => {
            Err(io::Error::new(io::ErrorKind::AlreadyExists, NOT_REPLACEABLE))
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// A file written whole or not at all (see the module docs): write to it,
/// then [`commit`](Self::commit); dropped uncommitted, nothing is left.
pub struct AtomicFile {
    tmp: io::BufWriter<tempfile::NamedTempFile>,
    target: PathBuf,
}

impl AtomicFile {
    /// Creates the temporary file for `target`, exclusively, in its
    /// directory (`.NAME.XXXXXX.tmp`).
    ///
    /// Errors: the target exists and is not a regular file
    /// ([`is_not_replaceable`]), or the temporary file cannot be created.
    pub fn create(target: &Path) -> io::Result<Self> {
        check_replaceable(target)?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = target.file_name().map_or("out".into(), |n| n.to_string_lossy());
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)?;
        Ok(Self {
            tmp: io::BufWriter::with_capacity(1 << 20, tmp),
            target: target.to_path_buf(),
        })
    }

    /// The path the file will have once committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flushes and syncs the file, gives it the mode a plain create would
    /// (0644 under the usual umask) or the replaced file's, and renames it
    /// over the target (checked again to be absent or a regular file).
    pub fn commit(self) -> io::Result<()> {
        let tmp = self.tmp.into_inner().map_err(|e| e.into_error())?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&self.target).map_or(0o644, |m| m.permissions().mode() & 0o7777);
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        tmp.as_file().sync_all()?;
        check_replaceable(&self.target)?;
        tmp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.tmp.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tmp.flush()
    }
}

/// Writes `bytes` to `target` through an [`AtomicFile`].
pub fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(target)?;
    file.write_all(bytes)?;
    file.commit()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&fifo).unwrap_err();
        assert!(is_not_regular(&e), "{e}");
        assert!(is_not_regular(&read_regular(&fifo, 100).unwrap_err()));
        assert!(is_not_regular(&open_regular(dir.path()).unwrap_err()));
        let file = dir.path().join("f");
        std::fs::write(&file, b"abc").unwrap();
        assert_eq!(read_regular(&file, 100).unwrap(), b"abc");
        assert_eq!(
            read_regular(&file, 2).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }

    #[test]
    fn writes_never_follow_a_planted_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.path().join("out");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write_atomic(&link, b"new").unwrap_err();
        assert!(is_not_replaceable(&e), "{e}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        // A regular target is replaced whole, and nothing else is left.
        let out = dir.path().join("plain");
        std::fs::write(&out, b"old").unwrap();
        write_atomic(&out, b"new").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }
}
