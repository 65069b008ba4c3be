//! Filters from Python: RocksDB-format filter blocks (`build_filter`,
//! `FilterReader`) and the standalone and Balanced Ribbon filters
//! (`Ribbon`), each with one-key and batch queries.

use crate::errors::{io_error, standalone_error, NotAFilterError, PolicyError};
use crate::handle::{closable_pymethods, Handle};
use crate::keys::{answer_many, Answers, KeySource, KeyView};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::format::FilterReader as Reader;
use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};
use ribbon::standalone::{Config, Mode, Ribbon as RustRibbon, RibbonRef};
use std::path::PathBuf;

/// The filter builder for `policy` in the context of `format_version` and
/// `level` (`None`: an SstFileWriter file, as RocksDB's default).
fn builder(policy: &str, format_version: i64, level: Option<i32>) -> PyResult<FilterBuilder> {
    let format_version = ribbon::check_format_version(format_version)
        .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    let parsed: FilterPolicy = policy
        .parse()
        .map_err(|e: ribbon::PolicyParseError| PolicyError::new_err(e.to_string()))?;
    let ctx = match level {
        Some(level) => BuildContext::at_level(format_version, Some(level)),
        None => BuildContext::sst_file_writer(format_version),
    };
    FilterBuilder::new(&parsed, &ctx).ok_or_else(|| {
        PolicyError::new_err(format!(
            "policy {policy:?} writes no filter (format_version {format_version}, level {level:?})"
        ))
    })
}

/// build_filter(policy, keys, *, format_version=7, level=None) -> bytes
///
/// Builds the filter block RocksDB writes for ``keys`` under ``policy`` (a
/// filter policy id as in RocksDB's options: ``"ribbonfilter:10"``,
/// ``"bloomfilter:10"``, ``"ribbonfilter:10:2"``), bit for bit the bytes
/// of RocksDB 11.8's ``FilterBitsBuilder::Finish`` (without the block
/// trailer). ``level=None`` builds as an SstFileWriter file does; a level
/// builds as a compaction output at that level (``bloom_before_level``).
/// The GIL is released while the filter is built.
///
/// Raises ``PolicyError`` for a policy RocksDB would not accept or one that
/// writes no filter, ``ValueError`` for a ``format_version`` RocksDB does
/// not write (it accepts 0 to 7; 0 and 1 write as 2), ``TypeError`` for a
/// key that is not ``bytes``, ``MemoryError`` for a batch too large to
/// hold.
///
/// >>> data = build_filter("ribbonfilter:10", [b"a", b"b"])
/// >>> FilterReader(data).may_match(b"a")
/// True
#[pyfunction]
#[pyo3(signature = (policy, keys, *, format_version = ribbon::DEFAULT_FORMAT_VERSION as i64, level = None))]
pub fn build_filter<'py>(
    py: Python<'py>,
    policy: &str,
    keys: &Bound<'py, PyAny>,
    format_version: i64,
    level: Option<i32>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut b = builder(policy, format_version, level)?;
    let source = KeySource::new(keys)?;
    let view = source.view();
    let bytes = py.detach(|| {
        // The builder's hash per key, allocated fallibly up front.
        b.try_reserve(view.len())
            .map_err(|_| crate::keys::memory_error("the key hashes", view.len()))?;
        view.for_each(|k| b.add_key(k));
        Ok::<_, PyErr>(b.finish())
    })?;
    Ok(PyBytes::new(py, &bytes))
}

/// The Rust build of `build_filter`, timed in Rust alone (for the benchmark
/// that compares the two: same keys, same policy, same context). Returns
/// (seconds, filter bytes).
#[pyfunction]
#[pyo3(signature = (policy, keys, *, format_version = ribbon::DEFAULT_FORMAT_VERSION as i64))]
pub fn _rust_build_seconds<'py>(
    py: Python<'py>,
    policy: &str,
    keys: &Bound<'py, PyAny>,
    format_version: i64,
) -> PyResult<(f64, Bound<'py, PyBytes>)> {
    let mut b = builder(policy, format_version, None)?;
    let owned: Vec<Vec<u8>> = KeySource::new(keys)?
        .slices()?
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect();
    let (secs, bytes) = py.detach(|| {
        let start = std::time::Instant::now();
        b.extend(&owned);
        let bytes = b.finish();
        (start.elapsed().as_secs_f64(), bytes)
    });
    Ok((secs, PyBytes::new(py, &bytes)))
}

/// The Rust batch query of `FilterReader.may_match_many`, timed in Rust
/// alone (for the benchmark: the same filter bytes and keys, copied into
/// Rust first). Returns (seconds, keys that may match).
#[pyfunction]
pub fn _rust_query_seconds(py: Python<'_>, data: &[u8], keys: &Bound<'_, PyAny>) -> PyResult<(f64, usize)> {
    Reader::parse(data).map_err(|e| NotAFilterError::new_err(e.to_string()))?;
    let owned: Vec<Vec<u8>> = KeySource::new(keys)?
        .slices()?
        .into_iter()
        .map(<[u8]>::to_vec)
        .collect();
    Ok(py.detach(|| {
        let r = Reader::new(data);
        let start = std::time::Instant::now();
        let answers = r.may_match_many(&owned);
        let secs = start.elapsed().as_secs_f64();
        (secs, answers.iter().filter(|&&a| a).count())
    }))
}

/// Answers for `keys` from a RocksDB-format filter reader into `out`:
/// 64-bit hashes first, then one batch of probes (the legacy Bloom hashes
/// its own way).
fn reader_many(r: &Reader<'_>, keys: &KeyView<'_>, out: &mut [bool]) -> PyResult<()> {
    if r.takes_hash64() {
        r.may_match_many_hashes_into(&keys.hashes()?, out);
    } else {
        r.may_match_many_into(&keys.slices()?, out);
    }
    Ok(())
}

/// FilterReader(data)
///
/// A filter block RocksDB writes (``build_filter``'s bytes, or a full
/// filter block read out of an SST file), opened for queries. The bytes are
/// checked: anything that is not FastLocalBloom, legacy Bloom or
/// Standard128 Ribbon with a consistent trailer and length (or RocksDB's
/// always-true filter) raises ``NotAFilterError``, saying how RocksDB
/// would read it. The bytes are copied.
///
/// >>> r = FilterReader(build_filter("bloomfilter:10", [b"k"]))
/// >>> r.kind
/// 'FastLocalBloom'
#[pyclass(module = "rocks_ribbon", name = "FilterReader", frozen)]
pub struct FilterReader {
    data: Vec<u8>,
}

impl FilterReader {
    fn reader(&self) -> Reader<'_> {
        Reader::new(&self.data)
    }
}

#[pymethods]
impl FilterReader {
    #[new]
    fn new(data: &[u8]) -> PyResult<Self> {
        Reader::parse(data).map_err(|e| NotAFilterError::new_err(e.to_string()))?;
        Ok(Self {
            data: crate::keys::copy_bytes(data)?,
        })
    }

    /// may_match(key) -> bool
    ///
    /// Whether ``key`` may be in the filter (``False``: certainly not).
    fn may_match(&self, key: &[u8]) -> bool {
        self.reader().may_match(key)
    }

    /// may_match_many(keys) -> numpy.ndarray[bool]
    ///
    /// ``may_match`` of each key of ``keys`` (a list of ``bytes`` or a NumPy
    /// ``S<n>`` array), in order, with the GIL released.
    fn may_match_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> Answers<'py> {
        answer_many(py, keys, |keys, out| reader_many(&self.reader(), keys, out))
    }

    /// The filter's format: ``Standard128Ribbon``, ``FastLocalBloom``,
    /// ``LegacyBloom``, ``AlwaysFalse`` or ``AlwaysTrue``.
    #[getter]
    fn kind(&self) -> &'static str {
        self.reader().describe().kind_name()
    }

    /// expected_fp_rate(num_keys) -> float
    ///
    /// The false-positive rate RocksDB's formula gives this filter holding
    /// ``num_keys`` keys.
    fn expected_fp_rate(&self, num_keys: usize) -> f64 {
        self.reader().describe().expected_fp_rate(num_keys)
    }

    /// The filter block's bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data)
    }

    fn __len__(&self) -> usize {
        self.data.len()
    }

    fn __repr__(&self) -> String {
        format!("FilterReader({}, {} bytes)", self.kind(), self.data.len())
    }
}

/// Where a standalone filter's bytes are.
enum Storage {
    /// Built or read into memory.
    Owned(Box<RustRibbon>),
    /// A file mapped into memory (checked whole when opened).
    Mapped(memmap2::Mmap),
}

/// Ribbon: a standalone (or Balanced) Ribbon filter
///
/// Built from keys with ``Ribbon.build`` (``balanced=True`` for the
/// Balanced Ribbon of the paper's section 6: under 1 % space overhead at
/// width 64), saved with ``to_bytes``, and read back with
/// ``Ribbon.from_bytes`` or, zero-copy, ``Ribbon.open(path)`` (a memory
/// map; close it with ``close()`` or a ``with`` block). The bytes are the
/// versioned, checksummed format of the ``ribbon`` tool and the C library.
///
/// >>> f = Ribbon.build([b"apple", b"pear"], bits=7)
/// >>> f.may_match(b"apple"), Ribbon.from_bytes(f.to_bytes()).may_match(b"pear")
/// (True, True)
#[pyclass(module = "rocks_ribbon", name = "Ribbon", frozen)]
pub struct Ribbon {
    handle: Handle<Storage>,
}

impl Ribbon {
    fn stored(storage: Storage) -> Self {
        Self {
            handle: Handle::new(storage, "the filter is closed".to_owned()),
        }
    }

    fn owned(r: RustRibbon) -> Self {
        Self::stored(Storage::Owned(Box::new(r)))
    }

    /// Runs `f` on the filter's view; `ClosedError` after `close()`.
    fn with<T>(&self, f: impl FnOnce(RibbonRef<'_>) -> T) -> PyResult<T> {
        self.handle.with(|storage| match storage {
            Storage::Owned(r) => Ok(f(r.as_ribbon_ref())),
            Storage::Mapped(m) => {
                // Checked whole (both checksums) when opened; the header is
                // parsed again here (O(1)).
                let view = RibbonRef::from_bytes_unverified(m).map_err(standalone_error)?;
                Ok(f(view))
            }
        })?
    }
}

closable_pymethods! {
/// close(): frees the filter (unmaps a file). Later queries raise
/// ``ClosedError``; closing twice is allowed.
impl Ribbon {
    /// Ribbon.build(keys, *, bits=7.0, fp_rate=None, width=128, mode="standard",
    /// balanced=False, smash=False, seed=0, low_memory=False) -> Ribbon
    ///
    /// Builds a filter of ``keys`` (a list of ``bytes`` or a NumPy ``S<n>``
    /// array) with ``bits`` result bits per slot (FP rate ``2**-bits``), or
    /// aiming at ``fp_rate``; ``width`` 32, 64 or 128; ``mode``
    /// ``"standard"`` or ``"homogeneous"``; ``balanced`` for Balanced
    /// Ribbon (``low_memory`` builds it in bounded memory). The GIL is
    /// released while it is built. Raises ``ConfigError`` for invalid
    /// settings or a failed construction.
    #[staticmethod]
    #[pyo3(signature = (keys, *, bits = 7.0, fp_rate = None, width = 128, mode = "standard", balanced = false, smash = false, seed = 0, low_memory = false))]
    #[allow(clippy::too_many_arguments)]
    fn build(
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        bits: f64,
        fp_rate: Option<f64>,
        width: u32,
        mode: &str,
        balanced: bool,
        smash: bool,
        seed: u32,
        low_memory: bool,
    ) -> PyResult<Self> {
        let mode = match mode {
            "standard" => Mode::Standard,
            "homogeneous" => Mode::Homogeneous,
            other => {
                return Err(crate::errors::ConfigError::new_err(format!(
                    "mode: \"standard\" or \"homogeneous\" expected, got {other:?}"
                )))
            }
        };
        let mut config = Config {
            mode,
            balanced,
            smash,
            seed,
            low_memory,
            ..Config::standard(width, bits)
        };
        if let Some(p) = fp_rate {
            config = config.with_fp_rate(p);
        }
        let source = KeySource::new(keys)?;
        let view = source.view();
        // The keys' hashes, in a buffer allocated fallibly (a batch too
        // large is a MemoryError), handed to the build (`from_keys` would
        // hash them into a buffer of its own).
        let built = py.detach(|| {
            let hashes = view.hashes()?;
            RustRibbon::from_hash_vec(hashes, &config).map_err(standalone_error)
        })?;
        Ok(Self::owned(built))
    }

    /// Ribbon.from_bytes(data) -> Ribbon
    ///
    /// A filter from its bytes (``to_bytes``), checked whole: magic,
    /// version, length and both checksums (``CorruptionError``).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Self> {
        let owned = crate::keys::copy_bytes(data)?;
        let r = py
            .detach(|| RibbonRef::from_bytes(&owned).map(|v| v.to_ribbon()))
            .map_err(standalone_error)?;
        Ok(Self::owned(r))
    }

    /// Ribbon.open(path) -> Ribbon
    ///
    /// Maps the filter file at ``path`` into memory (zero-copy) after
    /// checking it whole. As with any memory map, the file must not be
    /// truncated while it is open. Use ``with Ribbon.open(p) as f:`` or
    /// ``close()``.
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        // Only a regular file, and an open that never blocks (a FIFO).
        let (file, _) = ribbon_sst::fs::open_regular(&path).map_err(|e| io_error(&path, &e))?;
        // SAFETY: the map is read-only and private to this object; another
        // process truncating the file while it is mapped could fault a read
        // (SIGBUS), as with any memory map, which the class docs state.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| io_error(&path, &e))?;
        py.detach(|| RibbonRef::from_bytes(&map).map(|_| ()))
            .map_err(|e| {
                let inner = standalone_error(e);
                Python::attach(|py| {
                    PyErr::from_type(
                        inner.get_type(py),
                        format!("{}: {}", path.display(), inner.value(py)),
                    )
                })
            })?;
        Ok(Self::stored(Storage::Mapped(map)))
    }

    /// Ribbon.from_rocksdb(data, num_keys=0) -> Ribbon
    ///
    /// The standalone twin of a RocksDB Standard128 Ribbon filter block
    /// (``build_filter("ribbonfilter:...")``'s bytes) built from
    /// ``num_keys`` keys (recorded, as RocksDB's block does not say): the
    /// same answers. ``NotAFilterError`` for bytes that are no filter block
    /// RocksDB writes (checked as ``FilterReader`` checks them: no bytes, a
    /// short or inconsistent trailer) or another format.
    #[staticmethod]
    #[pyo3(signature = (data, num_keys = 0))]
    fn from_rocksdb(data: &[u8], num_keys: u64) -> PyResult<Self> {
        // Bytes from outside a table: refused as `ribbon standalone
        // --from-rocksdb` and `FilterReader` refuse them, before import.
        Reader::parse(data).map_err(|e| NotAFilterError::new_err(e.to_string()))?;
        RustRibbon::from_rocksdb(data, num_keys)
            .map(Self::owned)
            .map_err(standalone_error)
    }

    /// may_match(key) -> bool
    ///
    /// Whether ``key`` may be in the filter (``False``: certainly not).
    fn may_match(&self, key: &[u8]) -> PyResult<bool> {
        self.with(|r| r.contains(key))
    }

    fn __contains__(&self, key: &[u8]) -> PyResult<bool> {
        self.may_match(key)
    }

    /// may_match_many(keys) -> numpy.ndarray[bool]
    ///
    /// ``may_match`` of each key (a list of ``bytes`` or a NumPy ``S<n>``
    /// array), in order, with the GIL released.
    fn may_match_many<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> Answers<'py> {
        answer_many(py, keys, |keys, out| {
            let hashes = keys.hashes()?;
            self.with(|r| r.contains_many_hashes_into(&hashes, out))
        })
    }

    /// to_bytes() -> bytes: the filter's file bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.with(|r| PyBytes::new(py, r.as_bytes()))
    }

    /// info() -> dict: the filter's settings and sizes.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        self.with(|r| -> PyResult<()> {
            d.set_item("num_keys", r.num_keys())?;
            d.set_item("num_slots", r.num_slots())?;
            d.set_item("width", r.width())?;
            d.set_item("balanced", r.is_balanced())?;
            d.set_item("result_bits", r.result_bits())?;
            d.set_item("bits_per_key", r.bits_per_key())?;
            d.set_item("expected_fp_rate", r.expected_fp_rate())?;
            d.set_item("target_fp_rate", r.target_fp_rate())?;
            d.set_item("seed", r.seed())?;
            d.set_item("format_version", r.format_version())?;
            d.set_item("bytes", r.as_bytes().len())?;
            Ok(())
        })??;
        Ok(d)
    }

    /// The number of keys the filter was built from.
    fn __len__(&self) -> PyResult<usize> {
        self.with(|r| r.num_keys() as usize)
    }

    fn __repr__(&self) -> String {
        self.with(|r| {
            format!(
                "Ribbon({} keys, width {}, {:.2} bits/key{})",
                r.num_keys(),
                r.width(),
                r.bits_per_key(),
                if r.is_balanced() { ", balanced" } else { "" }
            )
        })
        .unwrap_or_else(|_| "Ribbon(closed)".to_owned())
    }
}
}
