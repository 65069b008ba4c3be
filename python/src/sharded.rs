//! Sharded (billion-key) containers from Python, the Rust half of
//! `rocks_ribbon.spark` (issue 35): the shard rule, hashing and routing of
//! Arrow key arrays, one shard's build, assembly and a memory-mapped,
//! read-only view with batch queries.
//!
//! Everything here is `ribbon::standalone::sharded` (the library the `ribbon
//! big` commands use): a key's hash is `get_slice_hash64` of its bytes, its
//! shard the hash's top `shard_bits` bits (`shard_of`), and a shard is
//! `build_shard_file` of its hashes, so a container built through these
//! functions has the bytes `ribbon big build --shard-bits B` writes for the
//! same keys and settings (the shard build depends on the set of hashes
//! only, not on the order a Spark shuffle delivers them in; the Spark test
//! compares the files).
//!
//! Arrow arrays cross as the raw buffers of a `large_binary` array (64-bit
//! little-endian offsets and the data bytes, as `bytes` objects), with the
//! array's `offset` and `length`: the stable ABI (`abi3`) has no buffer
//! protocol before Python 3.11. Every offset is checked against the data
//! before a key is read; bad buffers are a `ValueError`, never a panic.

use memmap2::Mmap;
use pyo3::exceptions::{PyMemoryError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use ribbon::core::hash::get_slice_hash64;
use ribbon::standalone::sharded::format::SHARD_FILE_HEADER_LEN;
use ribbon::standalone::sharded::{
    build_shard_file as lib_build_shard_file, shard_of as lib_shard_of, Layout, ShardEntry, ShardedRef,
    MAX_SHARD_BITS,
};
use ribbon::standalone::Config;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Adds this module's functions and classes to the extension module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(key_hash, m)?)?;
    m.add_function(wrap_pyfunction!(shard_of, m)?)?;
    m.add_function(wrap_pyfunction!(shard_of_key, m)?)?;
    m.add_function(wrap_pyfunction!(hash_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(build_shard, m)?)?;
    m.add_function(wrap_pyfunction!(assemble, m)?)?;
    m.add_function(wrap_pyfunction!(assemble_files, m)?)?;
    m.add("MAX_SHARD_BITS", MAX_SHARD_BITS)?;
    m.add("SHARD_FILE_HEADER_LEN", SHARD_FILE_HEADER_LEN)?;
    m.add_class::<ShardRouter>()?;
    m.add_class::<ShardedFilter>()?;
    Ok(())
}

fn check_shard_bits(shard_bits: u32) -> PyResult<()> {
    if shard_bits > MAX_SHARD_BITS {
        return Err(PyValueError::new_err(format!(
            "shard_bits {shard_bits}: at most {MAX_SHARD_BITS}"
        )));
    }
    Ok(())
}

/// The shard configuration for `kind`, `bits` result bits and `width`,
/// validated (as `ribbon big build --kind --bits --width`).
fn config(kind: &str, bits: f64, width: u32) -> PyResult<Config> {
    let config = match kind {
        "balanced" => Config::balanced(width, bits),
        "standard" => Config::standard(width, bits),
        "homogeneous" => Config::homogeneous(width, bits),
        other => {
            return Err(PyValueError::new_err(format!(
                "kind {other:?}: expected \"balanced\", \"standard\" or \"homogeneous\""
            )))
        }
    };
    if ![32, 64, 128].contains(&width) {
        return Err(PyValueError::new_err(format!(
            "width {width}: expected 32, 64 or 128"
        )));
    }
    config
        .validate()
        .map_err(|e| PyValueError::new_err(format!("kind {kind:?}, bits {bits}: {e}")))?;
    Ok(config)
}

/// key_hash(key: bytes) -> int
///
/// The 64-bit hash of ``key`` (RocksDB's ``GetSliceHash64``) that picks its
/// shard and that its shard stores (remixed).
#[pyfunction]
fn key_hash(key: &[u8]) -> u64 {
    get_slice_hash64(key)
}

/// shard_of(hash: int, shard_bits: int) -> int
///
/// The shard of a key with 64-bit hash ``hash`` among ``2**shard_bits``:
/// the hash's top ``shard_bits`` bits (the container's shard rule).
/// Raises ``ValueError`` for ``shard_bits`` above ``MAX_SHARD_BITS``.
#[pyfunction]
fn shard_of(hash: u64, shard_bits: u32) -> PyResult<usize> {
    check_shard_bits(shard_bits)?;
    Ok(lib_shard_of(hash, shard_bits))
}

/// shard_of_key(key: bytes, shard_bits: int) -> int
///
/// ``shard_of(key_hash(key), shard_bits)``.
#[pyfunction]
fn shard_of_key(key: &[u8], shard_bits: u32) -> PyResult<usize> {
    check_shard_bits(shard_bits)?;
    Ok(lib_shard_of(get_slice_hash64(key), shard_bits))
}

/// The key slices of a `large_binary` Arrow array given by its buffers:
/// `offsets` (at least `offset + length + 1` little-endian i64s,
/// non-decreasing, within `data`). Errors name the first bad offset.
fn arrow_keys<'a>(
    offsets: &'a [u8],
    data: &'a [u8],
    offset: usize,
    length: usize,
) -> PyResult<Vec<&'a [u8]>> {
    let need = offset
        .checked_add(length)
        .and_then(|n| n.checked_add(1))
        .and_then(|n| n.checked_mul(8))
        .ok_or_else(|| PyValueError::new_err("Arrow array: offset + length overflows"))?;
    if offsets.len() < need {
        return Err(PyValueError::new_err(format!(
            "Arrow array: {} offset bytes, {need} needed for offset {offset} and length {length}",
            offsets.len()
        )));
    }
    let at = |i: usize| -> i64 {
        let b = &offsets[i * 8..i * 8 + 8];
        i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    };
    let mut keys = crate::keys::with_room(length, "the key slices")?;
    let mut start = at(offset);
    for i in offset..offset + length {
        let end = at(i + 1);
        if start < 0 || end < start || end as u64 > data.len() as u64 {
            return Err(PyValueError::new_err(format!(
                "Arrow array: key {} spans offsets {start}..{end}, outside the {} data bytes",
                i - offset,
                data.len()
            )));
        }
        keys.push(&data[start as usize..end as usize]);
        start = end;
    }
    Ok(keys)
}

/// hash_arrow(offsets: bytes, data: bytes, offset: int, length: int) -> bytes
///
/// The 64-bit hashes (``key_hash``) of the keys of a ``large_binary`` Arrow
/// array, from its offsets and data buffers, as little-endian u64s
/// (``numpy.frombuffer(..., dtype="<u8")``). The GIL is released while
/// hashing. Raises ``ValueError`` for offsets that do not fit the data.
#[pyfunction]
fn hash_arrow<'py>(
    py: Python<'py>,
    offsets: &[u8],
    data: &[u8],
    offset: usize,
    length: usize,
) -> PyResult<Bound<'py, PyBytes>> {
    let keys = arrow_keys(offsets, data, offset, length)?;
    let mut out: Vec<u8> = Vec::new();
    out.try_reserve_exact(keys.len().saturating_mul(8))
        .map_err(|_| crate::keys::memory_error("the key hashes", keys.len()))?;
    py.detach(|| {
        for k in &keys {
            out.extend_from_slice(&get_slice_hash64(k).to_le_bytes());
        }
    });
    Ok(PyBytes::new(py, &out))
}

/// Little-endian u64s from `bytes` blobs (each a multiple of 8 bytes).
fn hashes_of(blobs: &[Vec<u8>]) -> PyResult<Vec<u64>> {
    let total: usize = blobs.iter().map(Vec::len).sum();
    let mut hashes = crate::keys::with_room(total / 8, "the key hashes")?;
    for (i, b) in blobs.iter().enumerate() {
        if b.len() % 8 != 0 {
            return Err(PyValueError::new_err(format!(
                "hash blob {i}: {} bytes, not a whole number of 8-byte hashes",
                b.len()
            )));
        }
        hashes.extend(
            b.chunks_exact(8)
                .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])),
        );
    }
    Ok(hashes)
}

/// build_shard(hashes: list[bytes], shard: int, shard_bits: int, *, bits=7.0, kind="balanced", width=64) -> bytes
///
/// Builds shard ``shard`` of ``2**shard_bits`` from its keys' 64-bit hashes
/// (little-endian u64s, in any number of ``bytes`` blobs, any order,
/// duplicates allowed) and returns its shard file (the ``ribbon big shard``
/// bytes: a header naming the shard, then the standalone filter). The GIL
/// is released while the shard is built.
///
/// Raises ``ValueError`` for a bad configuration, a blob that is not whole
/// hashes, a hash of another shard (its key would be a false negative) or
/// a construction failure.
#[pyfunction]
#[pyo3(signature = (hashes, shard, shard_bits, *, bits = 7.0, kind = "balanced", width = 64))]
fn build_shard<'py>(
    py: Python<'py>,
    hashes: Vec<Vec<u8>>,
    shard: usize,
    shard_bits: u32,
    bits: f64,
    kind: &str,
    width: u32,
) -> PyResult<Bound<'py, PyBytes>> {
    check_shard_bits(shard_bits)?;
    let config = config(kind, bits, width)?;
    let file = py.detach(move || -> PyResult<Vec<u8>> {
        let hashes = hashes_of(&hashes)?;
        lib_build_shard_file(&hashes, shard, shard_bits, &config)
            .map_err(|e| PyValueError::new_err(format!("shard {shard}: {e}")))
    })?;
    Ok(PyBytes::new(py, &file))
}

/// assemble(shard_bits: int, shard_files: list[bytes]) -> bytes
///
/// Assembles ``2**shard_bits`` shard files (shard 0 first) into one
/// container, in memory, after checking that each is that shard of that
/// many and verifying its checksums. Raises ``ValueError`` otherwise.
#[pyfunction]
fn assemble<'py>(
    py: Python<'py>,
    shard_bits: u32,
    shard_files: Vec<Vec<u8>>,
) -> PyResult<Bound<'py, PyBytes>> {
    check_shard_bits(shard_bits)?;
    let out = py.detach(|| {
        let refs: Vec<&[u8]> = shard_files.iter().map(Vec::as_slice).collect();
        ribbon::standalone::sharded::assemble(shard_bits, &refs)
    });
    let out = out.map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(PyBytes::new(py, &out))
}

/// An I/O error on `path` as `OSError` naming it (`MemoryError` for a
/// buffer that could not be allocated).
fn os_error(path: &Path, e: std::io::Error) -> PyErr {
    let msg = format!("{}: {e}", path.display());
    if e.kind() == std::io::ErrorKind::OutOfMemory {
        PyMemoryError::new_err(msg)
    } else {
        PyOSError::new_err(msg)
    }
}

/// A shard file's bytes: a regular file only (never blocking on a FIFO),
/// read whole into a buffer allocated fallibly.
fn read_shard(path: &Path) -> PyResult<Vec<u8>> {
    ribbon_sst::fs::read_regular(path, u64::MAX).map_err(|e| os_error(path, e))
}

/// Assembles shard files on disk into `out` (see `assemble_files`).
fn assemble_paths(shard_bits: u32, shards: &[PathBuf], out: &Path) -> PyResult<u64> {
    let count = 1usize << shard_bits;
    if shards.len() != count {
        return Err(PyValueError::new_err(format!(
            "{} shard files given for {shard_bits} shard bits ({count} expected)",
            shards.len()
        )));
    }
    let entry = |i: usize, path: &Path, bytes: &[u8]| {
        ShardEntry::of_file(i, shard_bits, bytes)
            .map(|(e, _)| e)
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))
    };
    let mut entries = Vec::with_capacity(count);
    for (i, path) in shards.iter().enumerate() {
        entries.push(entry(i, path, &read_shard(path)?)?);
    }
    let layout = Layout::new(shard_bits, &entries).map_err(|e| PyValueError::new_err(e.to_string()))?;
    // Written whole or not at all, through a temporary file created
    // exclusively (never through a name planted beside `out`): the
    // workspace's one owner of the rule, as `ribbon big assemble`.
    let mut w = ribbon_sst::fs::AtomicFile::create(out).map_err(|e| os_error(out, e))?;
    w.write_all(&layout.head()).map_err(|e| os_error(out, e))?;
    for (i, path) in shards.iter().enumerate() {
        // Read again and checked again: the file may have changed.
        let bytes = read_shard(path)?;
        if entry(i, path, &bytes)? != entries[i] {
            return Err(PyValueError::new_err(format!(
                "{}: changed while the shards were assembled",
                path.display()
            )));
        }
        w.write_all(&bytes[SHARD_FILE_HEADER_LEN..])
            .and_then(|()| w.write_all(&vec![0u8; layout.padding_after(i)]))
            .map_err(|e| os_error(out, e))?;
    }
    w.commit().map_err(|e| os_error(out, e))?;
    Ok(layout.file_len())
}

/// assemble_files(shard_bits: int, shard_paths: list[str], out_path: str) -> int
///
/// Assembles shard files on disk (shard 0 first, all ``2**shard_bits``)
/// into the container ``out_path``, as ``ribbon big assemble`` does: each
/// file is checked to be that shard and verified, then read again and
/// copied; the container is written to a temporary file created
/// exclusively beside ``out_path`` (a random name: never a name someone
/// else planted) and renamed over it when complete. Holds one shard in
/// memory at a time. Returns the container's length. The GIL is released.
///
/// Raises ``OSError`` for a file that cannot be read or written, a shard
/// that is not a regular file (a FIFO is refused at once, never waited
/// on) and an ``out_path`` that exists and is not a regular file (a
/// symbolic link is refused, not followed); ``ValueError`` for a shard
/// file that is not that shard or is damaged; ``MemoryError`` for a shard
/// too large to hold.
#[pyfunction]
fn assemble_files(
    py: Python<'_>,
    shard_bits: u32,
    shard_paths: Vec<PathBuf>,
    out_path: PathBuf,
) -> PyResult<u64> {
    check_shard_bits(shard_bits)?;
    py.detach(|| assemble_paths(shard_bits, &shard_paths, &out_path))
}

/// ShardRouter(shard_bits: int)
///
/// Hashes keys once and keeps each hash in its shard's buffer (the
/// container's shard rule), for a Spark task that sends each shard's
/// hashes to the task that builds it. ``buffered`` says how many hashes
/// are held (the caller drains at its memory bound); ``drain()`` hands
/// them over, one ``(shard, bytes)`` pair per non-empty shard.
#[pyclass(module = "rocks_ribbon._rocks_ribbon")]
pub struct ShardRouter {
    shard_bits: u32,
    buffers: Vec<Vec<u64>>,
    buffered: usize,
}

#[pymethods]
impl ShardRouter {
    #[new]
    fn new(shard_bits: u32) -> PyResult<Self> {
        check_shard_bits(shard_bits)?;
        Ok(Self {
            shard_bits,
            buffers: vec![Vec::new(); 1usize << shard_bits],
            buffered: 0,
        })
    }

    /// add_arrow(offsets: bytes, data: bytes, offset: int, length: int) -> None
    ///
    /// Hashes the keys of a ``large_binary`` Arrow array (as ``hash_arrow``)
    /// into their shards' buffers. The GIL is released while hashing.
    fn add_arrow(
        &mut self,
        py: Python<'_>,
        offsets: &[u8],
        data: &[u8],
        offset: usize,
        length: usize,
    ) -> PyResult<()> {
        let keys = arrow_keys(offsets, data, offset, length)?;
        let bits = self.shard_bits;
        let buffers = &mut self.buffers;
        py.detach(|| {
            for k in &keys {
                let h = get_slice_hash64(k);
                buffers[lib_shard_of(h, bits)].push(h);
            }
        });
        self.buffered += length;
        Ok(())
    }

    /// Hashes held, all shards together.
    #[getter]
    fn buffered(&self) -> usize {
        self.buffered
    }

    /// drain() -> list[tuple[int, bytes]]
    ///
    /// The held hashes, one ``(shard, little-endian u64 bytes)`` pair per
    /// non-empty shard, shard order; the buffers are emptied.
    fn drain<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (i, buf) in self.buffers.iter_mut().enumerate() {
            if buf.is_empty() {
                continue;
            }
            let bytes: Vec<u8> = buf.iter().flat_map(|h| h.to_le_bytes()).collect();
            list.append((i, PyBytes::new(py, &bytes)))?;
            *buf = Vec::new();
        }
        self.buffered = 0;
        Ok(list)
    }
}

/// ShardedFilter(path: str)
///
/// A sharded filter file (``ribbon big build``, ``rocks_ribbon.spark``),
/// memory-mapped read-only. Opening checks the header, the index and every
/// shard's header; each shard's checksum is verified the first time a
/// query uses it, and a damaged shard raises ``ValueError`` (never a silent
/// false negative). Queries release the GIL and allocate only the answers.
///
/// The file must not be changed or truncated while it is open (as with any
/// memory map, a truncation can end the process with SIGBUS); replace it
/// with a rename instead, as ``build_filter`` does.
#[pyclass(module = "rocks_ribbon._rocks_ribbon", frozen)]
pub struct ShardedFilter {
    // Declared before `_map`, so dropped before it: the view borrows the map.
    view: ShardedRef<'static>,
    _map: Mmap,
    // The read-only attributes, read from the header once when opened
    // (the doc comments are their Python docstrings).
    /// The path the filter was opened from.
    #[pyo3(get)]
    path: PathBuf,
    /// Keys the filter was built from (duplicates counted).
    #[pyo3(get)]
    num_keys: u64,
    /// ``2**shard_bits`` shards.
    #[pyo3(get)]
    shard_bits: u32,
    /// The file's length in bytes.
    #[pyo3(get)]
    file_len: u64,
    /// The file's bits per key (all of its bytes).
    #[pyo3(get)]
    bits_per_key: f64,
    /// The false-positive rate the shards' configuration predicts.
    #[pyo3(get)]
    expected_fp_rate: f64,
}

/// A sharded filter file's error as a `ValueError` naming the file.
fn file_error(path: &Path, e: ribbon::standalone::sharded::Error) -> PyErr {
    PyValueError::new_err(format!("{}: sharded filter file: {e}", path.display()))
}

impl ShardedFilter {
    fn check<T>(&self, r: Result<T, ribbon::standalone::sharded::Error>) -> PyResult<T> {
        r.map_err(|e| file_error(&self.path, e))
    }
}

#[pymethods]
impl ShardedFilter {
    #[new]
    fn open(path: PathBuf) -> PyResult<Self> {
        // Only a regular file, and an open that never blocks (a FIFO).
        let (file, _) = ribbon_sst::fs::open_regular(&path).map_err(|e| os_error(&path, e))?;
        // SAFETY: the map is read-only and private to this process, which
        // never writes the file; another process truncating it could fault
        // a read (SIGBUS), as with any memory map: the class docs say so.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| os_error(&path, e))?;
        // SAFETY: the mapped bytes live at a fixed address until the `Mmap`
        // is dropped (moving the `Mmap` value does not move them); the view
        // is stored beside the map in this struct and declared first, so it
        // is dropped before the map, and it is never handed out with the
        // 'static lifetime (every method borrows `self`).
        let bytes: &'static [u8] = unsafe { std::slice::from_raw_parts(map.as_ptr(), map.len()) };
        let view = ShardedRef::from_bytes(bytes).map_err(|e| file_error(&path, e))?;
        Ok(Self {
            num_keys: view.num_keys(),
            shard_bits: view.shard_bits(),
            file_len: view.file_len(),
            bits_per_key: view.bits_per_key(),
            expected_fp_rate: view.expected_fp_rate(),
            view,
            _map: map,
            path,
        })
    }

    /// may_contain(key: bytes) -> bool
    ///
    /// False if ``key`` is certainly not in the filter; True if it may be.
    fn may_contain(&self, key: &[u8]) -> PyResult<bool> {
        self.check(self.view.try_contains(key))
    }

    /// may_contain_hash(hash: int) -> bool
    ///
    /// ``may_contain`` for a key whose ``key_hash`` is ``hash``.
    fn may_contain_hash(&self, hash: u64) -> PyResult<bool> {
        self.check(self.view.try_contains_hash(hash))
    }

    /// may_contain_many(keys: list[bytes]) -> list[bool]
    ///
    /// ``may_contain`` for each key (a list of ``bytes`` or a NumPy
    /// ``S<n>`` array). The GIL is released. ``MemoryError`` for a batch
    /// too large for the memory available.
    fn may_contain_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let source = crate::keys::KeySource::new(keys)?;
        let view = source.view();
        let mut out = crate::keys::filled(false, view.len(), "the answers")?;
        py.detach(|| {
            view.for_each_chunk(&mut out, |keys, out| {
                let mut i = 0;
                let mut failed = None;
                keys.for_each(|k| {
                    if failed.is_none() {
                        match self.view.try_contains(k) {
                            Ok(a) => out[i] = a,
                            Err(e) => failed = Some(e),
                        }
                    }
                    i += 1;
                });
                failed.map_or(Ok(()), |e| Err(file_error(&self.path, e)))
            })
        })?;
        Ok(out)
    }

    /// may_contain_arrow(offsets: bytes, data: bytes, offset: int, length: int) -> bytes
    ///
    /// ``may_contain`` for each key of a ``large_binary`` Arrow array given
    /// by its buffers (as ``hash_arrow``): one byte per key, 1 or 0
    /// (``numpy.frombuffer(..., dtype=bool)``). The GIL is released.
    fn may_contain_arrow<'py>(
        &self,
        py: Python<'py>,
        offsets: &[u8],
        data: &[u8],
        offset: usize,
        length: usize,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let keys = arrow_keys(offsets, data, offset, length)?;
        let mut out = crate::keys::with_room(keys.len(), "the answers")?;
        py.detach(|| -> PyResult<()> {
            for k in &keys {
                out.push(u8::from(self.check(self.view.try_contains(k))?));
            }
            Ok(())
        })?;
        Ok(PyBytes::new(py, &out))
    }

    /// verify() -> None
    ///
    /// Reads every byte and checks every checksum now; raises ``ValueError``
    /// for a damaged file.
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        self.check(py.detach(|| self.view.verify()))
    }

    fn __repr__(&self) -> String {
        format!(
            "ShardedFilter({:?}: {} keys, {} shards, {:.3} bits/key)",
            self.path.display().to_string(),
            self.num_keys,
            self.view.num_shards(),
            self.bits_per_key
        )
    }
}
