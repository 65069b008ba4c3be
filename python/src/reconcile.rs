//! Set reconciliation from Python: `Sketch` (a strata estimator and an
//! invertible Bloom lookup table of a key set), its file bytes, and the
//! difference of two sketches.

use crate::errors::{db_error, sst_error, CorruptionError, ReconcileError};
use crate::keys::KeySource;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use ribbon_reconcile::{recommended_cells as rust_recommended_cells, Sketch as RustSketch, SketchParams};
use std::path::PathBuf;
use std::sync::Mutex;

/// recommended_cells(estimated_difference) -> int
///
/// The IBF cells that decode a difference the estimator put at
/// ``estimated_difference`` (``Sketch.estimate_difference``) at least 99 %
/// of the time.
#[pyfunction]
pub fn recommended_cells(estimated_difference: u64) -> usize {
    rust_recommended_cells(estimated_difference)
}

/// Sketch(cells=0, *, seed=0, chunk_bytes=32)
///
/// A sketch of a key set for reconciliation: a strata estimator (the size
/// of the difference) and, with ``cells > 0``, an IBF of ``cells`` cells
/// that lists the difference when it is up to about ``cells / 1.5`` keys.
/// Both sides must use the same ``cells``, ``seed`` and ``chunk_bytes``.
/// Fill it with ``insert``/``insert_many`` (a set: each key once), or make
/// it from an SST file (``Sketch.of_sst``) or a database's live keys
/// (``Sketch.of_db``). ``to_bytes``/``from_bytes`` give the file format of
/// ``ribbon reconcile sketch``.
///
/// >>> a = Sketch(60); a.insert_many([b"x", b"y"])
/// >>> b = Sketch(60); b.insert_many([b"y", b"z"])
/// >>> a.diff(b)
/// ([b'x'], [b'z'])
#[pyclass(module = "rocks_ribbon", name = "Sketch", frozen)]
pub struct Sketch {
    inner: Mutex<RustSketch>,
    /// The process that made it: in a child forked later, a lock a thread
    /// of the parent held at the fork is never released, so the child only
    /// tries the lock (`RuntimeError` when it is taken).
    pid: u32,
}

/// A sketch with these parameters (a `ReconcileError` when it cannot be
/// allocated or the parameters are out of range).
fn empty(cells: usize, seed: u64, chunk_bytes: usize) -> PyResult<RustSketch> {
    RustSketch::try_new(SketchParams {
        seed,
        cells,
        chunk_bytes,
        ..SketchParams::default()
    })
    .map_err(|e| ReconcileError::new_err(e.to_string()))
}

impl Sketch {
    /// The sketch, locked; in a process forked after it was made, only if
    /// no thread held it at the fork (`RuntimeError` otherwise, never a
    /// wait that cannot end).
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, RustSketch>> {
        if std::process::id() == self.pid {
            return Ok(self.inner.lock().unwrap_or_else(|p| p.into_inner()));
        }
        match self.inner.try_lock() {
            Ok(guard) => Ok(guard),
            Err(std::sync::TryLockError::Poisoned(p)) => Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
                "Sketch: another thread was using it when this process was forked: it cannot be used here",
            )),
        }
    }

    fn of(s: RustSketch) -> Self {
        Self {
            inner: Mutex::new(s),
            pid: std::process::id(),
        }
    }
}

#[pymethods]
impl Sketch {
    #[new]
    #[pyo3(signature = (cells = 0, *, seed = 0, chunk_bytes = ribbon_reconcile::sketch::DEFAULT_CHUNK_BYTES))]
    fn new(cells: usize, seed: u64, chunk_bytes: usize) -> PyResult<Self> {
        Ok(Self::of(empty(cells, seed, chunk_bytes)?))
    }

    /// insert(key): adds one key (each key of the set once).
    fn insert(&self, key: &[u8]) -> PyResult<()> {
        self.lock()?.insert(key);
        Ok(())
    }

    /// insert_many(keys): adds each distinct key of ``keys`` (a list of
    /// ``bytes`` or a NumPy ``S<n>`` array; repeats within the call are
    /// added once), with the GIL released.
    fn insert_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        let source = KeySource::new(keys)?;
        let mut slices = source.slices()?;
        py.detach(|| {
            slices.sort_unstable();
            slices.dedup();
            let mut s = self.lock()?;
            for k in &slices {
                s.insert(k);
            }
            Ok(())
        })
    }

    /// Sketch.of_db(path, cells=0, *, seed=0, chunk_bytes=32,
    /// column_family="default", wal_dir=None, db_paths=None) -> Sketch
    ///
    /// A sketch of a database directory's live keys (what RocksDB's
    /// iterator returns), read without RocksDB.
    #[staticmethod]
    #[pyo3(signature = (path, cells = 0, *, seed = 0, chunk_bytes = ribbon_reconcile::sketch::DEFAULT_CHUNK_BYTES, column_family = "default", wal_dir = None, db_paths = None))]
    #[allow(clippy::too_many_arguments)]
    fn of_db(
        py: Python<'_>,
        path: PathBuf,
        cells: usize,
        seed: u64,
        chunk_bytes: usize,
        column_family: &str,
        wal_dir: Option<PathBuf>,
        db_paths: Option<Vec<PathBuf>>,
    ) -> PyResult<Self> {
        let mut s = empty(cells, seed, chunk_bytes)?;
        let how = ribbon_sst::db::OpenOptions {
            wal_dir,
            db_paths: db_paths.unwrap_or_default(),
        };
        py.detach(|| {
            let db = ribbon_sst::db::Db::open_with(&path, column_family, &how)?;
            db.for_each_live_key(|k| s.insert(k))
        })
        .map_err(db_error)?;
        Ok(Self::of(s))
    }

    /// Sketch.of_sst(path, cells=0, *, seed=0, chunk_bytes=32) -> Sketch
    ///
    /// A sketch of every user key an SST file holds (each once, whatever
    /// its entries: values, deletions, merges).
    #[staticmethod]
    #[pyo3(signature = (path, cells = 0, *, seed = 0, chunk_bytes = ribbon_reconcile::sketch::DEFAULT_CHUNK_BYTES))]
    fn of_sst(py: Python<'_>, path: PathBuf, cells: usize, seed: u64, chunk_bytes: usize) -> PyResult<Self> {
        let mut s = empty(cells, seed, chunk_bytes)?;
        py.detach(|| {
            let sst = ribbon_sst::SstFile::open(&path)?;
            ribbon_sst::db::for_each_file_key(&sst, |k| s.insert(k))
        })
        .map_err(sst_error)?;
        Ok(Self::of(s))
    }

    /// Sketch.from_bytes(data) -> Sketch
    ///
    /// A sketch from its file bytes, checked (magic, version, limits,
    /// length, checksum) before anything is allocated: ``CorruptionError``.
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<Self> {
        RustSketch::from_bytes(data)
            .map(Self::of)
            .map_err(|e| CorruptionError::new_err(e.to_string()))
    }

    /// to_bytes() -> bytes: the sketch's file bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.lock()?.to_bytes()))
    }

    /// The number of keys inserted.
    #[getter]
    fn keys(&self) -> PyResult<u64> {
        Ok(self.lock()?.keys())
    }

    /// The IBF cells (0: an estimator-only sketch).
    #[getter]
    fn cells(&self) -> PyResult<usize> {
        Ok(self.lock()?.params().cells)
    }

    /// estimate_difference(other) -> int
    ///
    /// The estimated number of keys in exactly one of the two sets
    /// (``ReconcileError`` when the sketches cannot be compared).
    fn estimate_difference(&self, other: &Sketch) -> PyResult<u64> {
        let a = self.lock()?.clone();
        let b = other.lock()?;
        a.estimate_difference(&b)
            .map_err(|e| ReconcileError::new_err(e.to_string()))
    }

    /// diff(other) -> tuple[list[bytes], list[bytes]]
    ///
    /// The keys only in this sketch's set and the keys only in
    /// ``other``'s, each list sorted bytewise. ``ReconcileError`` (saying
    /// how many cells to use) when a sketch has no IBF or the difference is
    /// too large to decode: never a partial or wrong list.
    fn diff<'py>(
        &self,
        py: Python<'py>,
        other: &Sketch,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
        let a = self.lock()?.clone();
        let b = other.lock()?.clone();
        let d = py
            .detach(|| a.diff(&b))
            .map_err(|e| ReconcileError::new_err(e.to_string()))?;
        let list = |keys: &[Vec<u8>]| -> PyResult<Bound<'py, PyList>> {
            PyList::new(py, keys.iter().map(|k| PyBytes::new(py, k)))
        };
        Ok((list(&d.only_in_a)?, list(&d.only_in_b)?))
    }

    fn __repr__(&self) -> PyResult<String> {
        let s = self.lock()?;
        Ok(format!("Sketch({} keys, {} cells)", s.keys(), s.params().cells))
    }
}
