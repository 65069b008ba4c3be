//! Database directories from Python: `Db`, its live keys (a lazy iterator)
//! and the files a `Get` of each key asks.

use crate::errors::{db_error, db_error_at};
use crate::handle::{closable_pymethods, Handle};
use pyo3::exceptions::{PyRuntimeError, PyStopIteration};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use ribbon_sst::db::get::FileCache;
use ribbon_sst::db::{Db as RustDb, DbError, EntryKind, FileAnswer, GetPath, OpenOptions};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};

/// Keys per message from the live-key walk to the iterator.
const CHUNK_KEYS: usize = 4096;
/// Messages in flight: the iterator holds at most this many chunks (plus
/// the one it hands out), so memory stays bounded whatever the database.
const CHUNKS_IN_FLIGHT: usize = 4;

/// The open database and the SST files kept open between `get_path` calls.
struct Open {
    db: Arc<RustDb>,
    cache: Mutex<FileCache>,
    files: PyOnceLock<FileObjects>,
    /// The process that opened it: a child forked later never takes the
    /// cache's lock, which a thread of the parent may have held at the fork
    /// (it would never be released in the child).
    pid: u32,
}

impl Open {
    /// [`FileObjects`] of this database, made on first use.
    fn files(&self, py: Python<'_>) -> PyResult<&FileObjects> {
        self.files.get_or_try_init(py, || file_objects(py, &self.db))
    }

    /// The `Get` paths of `keys`, through the kept-open files (in a forked
    /// child: through files of its own, opened for this call).
    fn get_paths(&self, keys: &[&[u8]]) -> Result<Vec<GetPath>, DbError> {
        if std::process::id() != self.pid {
            return self.db.get_paths(keys, &mut FileCache::new());
        }
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        self.db.get_paths(keys, &mut cache)
    }
}

/// Db(path, column_family="default", *, wal_dir=None, db_paths=None)
///
/// A RocksDB database directory read without RocksDB: the MANIFEST's live
/// SST files and levels, the OPTIONS file, and the unflushed writes of the
/// WALs (replayed as the database's ``wal_recovery_mode`` says). Opening
/// reads no SST file. ``wal_dir`` and ``db_paths`` say where a database
/// keeps its WALs and files when not in ``path`` (RocksDB does not record
/// ``db_paths``). Raises ``IoError``, ``CorruptionError`` or
/// ``UnsupportedError`` (user-defined timestamps, comparators it cannot
/// reproduce) in one line naming the file.
///
/// >>> with Db("/path/to/db") as db:                # doctest: +SKIP
/// ...     keys = list(db.live_keys())
/// ...     db.get_path(keys[0])["found"]
/// True
#[pyclass(module = "rocks_ribbon", name = "Db", frozen)]
pub struct Db {
    handle: Handle<Arc<Open>>,
    path: PathBuf,
}

impl Db {
    /// The open database; `ClosedError` after `close()`.
    fn get(&self) -> PyResult<Arc<Open>> {
        self.handle.get()
    }
}

/// RocksDB's name of an entry kind.
fn kind_name(k: EntryKind) -> &'static str {
    match k {
        EntryKind::Value => "value",
        EntryKind::Deletion => "deletion",
        EntryKind::Merge => "merge",
    }
}

/// The Python objects of the live files (`name`, `path`, `level`), made
/// once per database on the first `Get` path and shared by every step
/// that names a file (a dict per step, but not a string per step).
type FileObjects = Vec<[Py<PyAny>; 3]>;

fn file_objects(py: Python<'_>, db: &RustDb) -> PyResult<FileObjects> {
    db.files()
        .map(|f| {
            Ok([
                f.name().into_pyobject(py)?.into_any().unbind(),
                f.path.clone().into_pyobject(py)?.into_any().unbind(),
                f.level.into_pyobject(py)?.into_any().unbind(),
            ])
        })
        .collect()
}

/// A step's `answer`: `filtered`, `absent`, or the kind of entry found.
fn answer_name(a: FileAnswer) -> &'static str {
    match a {
        FileAnswer::Found(k) => kind_name(k),
        FileAnswer::Filtered => "filtered",
        FileAnswer::Absent => "absent",
        FileAnswer::NotRead => "notread",
    }
}

/// One `Get` path as a dict (`files`: the batch's file objects).
fn path_dict<'py>(
    py: Python<'py>,
    files: &FileObjects,
    key: &[u8],
    p: &GetPath,
) -> PyResult<Bound<'py, PyDict>> {
    use pyo3::intern;
    let d = PyDict::new(py);
    d.set_item(intern!(py, "key"), PyBytes::new(py, key))?;
    d.set_item(intern!(py, "memtable"), PyString::intern(py, p.memtable.name()))?;
    d.set_item(intern!(py, "found"), p.found())?;
    let steps = PyList::empty(py);
    for s in &p.steps {
        let none = py.None();
        let [name, path, level] = files
            .get(s.file)
            .map_or([&none, &none, &none], |[a, b, c]| [a, b, c]);
        let step = PyDict::new(py);
        step.set_item(intern!(py, "file"), name)?;
        step.set_item(intern!(py, "path"), path)?;
        step.set_item(intern!(py, "level"), level)?;
        step.set_item(intern!(py, "has_filter"), s.has_filter)?;
        step.set_item(intern!(py, "may_match"), s.may_match)?;
        step.set_item(intern!(py, "answer"), PyString::intern(py, answer_name(s.answer)))?;
        step.set_item(intern!(py, "range_deleted"), s.range_deleted)?;
        steps.append(step)?;
    }
    d.set_item(intern!(py, "steps"), steps)?;
    Ok(d)
}

closable_pymethods! {
/// close(): forgets the database and closes the SST files kept open.
/// Later calls raise ``ClosedError``, and so does ``next()`` of an
/// iterator from ``live_keys`` (its reader thread stops). Closing twice is
/// allowed.
impl Db {
    #[new]
    #[pyo3(signature = (path, column_family = "default", *, wal_dir = None, db_paths = None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        column_family: &str,
        wal_dir: Option<PathBuf>,
        db_paths: Option<Vec<PathBuf>>,
    ) -> PyResult<Self> {
        let how = OpenOptions {
            wal_dir,
            db_paths: db_paths.unwrap_or_default(),
        };
        let db = py
            .detach(|| RustDb::open_with(&path, column_family, &how))
            .map_err(|e| db_error_at(e, &path))?;
        let open = Open {
            db: Arc::new(db),
            cache: Mutex::new(FileCache::new()),
            files: PyOnceLock::new(),
            pid: std::process::id(),
        };
        let closed_message = format!("{}: the database is closed", path.display());
        Ok(Self {
            handle: Handle::new(Arc::new(open), closed_message),
            path,
        })
    }

    /// list_column_families(path) -> list[str]
    ///
    /// The names of the column families of the database directory
    /// ``path``, ``"default"`` first (RocksDB's ``ListColumnFamilies``:
    /// read from its MANIFEST). Raises as ``Db(path)`` does.
    #[staticmethod]
    fn list_column_families(py: Python<'_>, path: PathBuf) -> PyResult<Vec<String>> {
        py.detach(|| RustDb::list_column_families(&path))
            .map_err(|e| db_error_at(e, &path))
    }

    /// The database directory.
    #[getter(path)]
    fn dir(&self) -> PathBuf {
        self.path.clone()
    }

    /// live_keys() -> Iterator[bytes]
    ///
    /// Each live user key (its newest entry is a value, not a deletion nor
    /// under a newer range deletion), once, in comparator order: what
    /// RocksDB's iterator returns. Read lazily in a background thread, a
    /// few thousand keys ahead (bounded memory); an error while reading is
    /// raised by ``next()``. After ``Db.close()``, ``next()`` raises
    /// ``ClosedError``; in a child process forked after the iterator was
    /// made (the reader thread stays in the parent), ``RuntimeError``:
    /// call ``live_keys()`` again in the child.
    fn live_keys(slf: &Bound<'_, Self>) -> PyResult<LiveKeys> {
        let open = slf.get().get()?;
        let (tx, rx) = sync_channel::<Result<Vec<Vec<u8>>, DbError>>(CHUNKS_IN_FLIGHT);
        let db = Arc::clone(&open.db);
        std::thread::Builder::new()
            .name("rocks_ribbon-live-keys".into())
            .spawn(move || {
                let mut chunk = Vec::with_capacity(CHUNK_KEYS);
                let mut gone = false;
                let walk = db.for_each_live_key(|k| {
                    if gone {
                        return;
                    }
                    chunk.push(k.to_vec());
                    if chunk.len() == CHUNK_KEYS {
                        let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_KEYS));
                        // The iterator was dropped: skip the rest.
                        gone = tx.send(Ok(full)).is_err();
                    }
                });
                if gone {
                    return;
                }
                let last = match walk {
                    Ok(_) => Ok(chunk),
                    Err(e) => Err(e),
                };
                let _ = tx.send(last);
            })
            .map_err(|e| crate::errors::Error::new_err(format!("cannot start the key reader: {e}")))?;
        Ok(LiveKeys {
            rx: Mutex::new(Some(rx)),
            chunk: Vec::new().into_iter(),
            db: slf.clone().unbind(),
            pid: std::process::id(),
        })
    }

    /// get_path(key) -> dict
    ///
    /// The path of RocksDB's ``Get`` of ``key``: ``memtable`` (what the
    /// unflushed writes answer: ``none``, ``value``, ``deleted``,
    /// ``merge``, ``range-deleted``), ``steps`` (each file asked, in
    /// order, up to where ``Get`` stops: ``file``, ``path``, ``level``,
    /// ``has_filter``, ``may_match`` (the filter's answer: RocksDB counts
    /// ``False`` in ``rocksdb.bloom.filter.useful`` and ``True`` in
    /// ``rocksdb.bloom.filter.full.positive`` for files with a filter),
    /// ``answer`` (``filtered``, ``absent``, ``value``, ``deletion``,
    /// ``merge``), ``range_deleted``) and ``found`` (``Get`` returns a
    /// value).
    fn get_path<'py>(&self, py: Python<'py>, key: &[u8]) -> PyResult<Bound<'py, PyDict>> {
        let open = self.get()?;
        let mut paths = py
            .detach(|| open.get_paths(&[key]))
            .map_err(db_error)?;
        let p = paths
            .pop()
            .ok_or_else(|| crate::errors::Error::new_err("no Get path"))?;
        path_dict(py, open.files(py)?, key, &p)
    }

    /// get_paths(keys) -> list[dict]
    ///
    /// ``get_path`` of each key of ``keys`` (a list of ``bytes`` or a NumPy
    /// ``S<n>`` array), asked in batches (the files kept open between them)
    /// with the GIL released. A batch too large for the memory available
    /// raises ``MemoryError``.
    fn get_paths<'py>(&self, py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
        let open = self.get()?;
        let source = crate::keys::KeySource::new(keys)?;
        let view = source.view();
        let files = open.files(py)?;
        let out = PyList::empty(py);
        // Chunk by chunk, so that the reader's buffers (one Get path per
        // key) stay small whatever the batch's size.
        let mut from = 0;
        while from < view.len() {
            let to = view.len().min(from + crate::keys::CHUNK_KEYS);
            let slices = view.range(from, to).slices()?;
            let paths = py
                .detach(|| open.get_paths(&slices))
                .map_err(db_error)?;
            for (k, p) in slices.iter().zip(&paths) {
                out.append(path_dict(py, files, k, p)?)?;
            }
            from = to;
        }
        Ok(out)
    }

    /// candidate_files(key) -> list[str]
    ///
    /// The paths of the files RocksDB's ``FilePicker`` hands a ``Get`` of
    /// ``key``, in order, before any is read (``get_path`` follows where
    /// the lookup stops).
    fn candidate_files(&self, key: &[u8]) -> PyResult<Vec<PathBuf>> {
        let open = self.get()?;
        Ok(open
            .db
            .candidate_files(key)
            .into_iter()
            .map(|f| f.path.clone())
            .collect())
    }

    /// files() -> list[dict]
    ///
    /// The live SST files: ``level``, ``name``, ``path``, ``number``,
    /// ``file_size``, ``smallest_key``, ``largest_key`` (user keys), L0
    /// newest first, then each level in key order.
    fn files<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let open = self.get()?;
        let out = PyList::empty(py);
        for f in open.db.files() {
            let d = PyDict::new(py);
            d.set_item("level", f.level)?;
            d.set_item("name", f.name())?;
            d.set_item("path", f.path.clone())?;
            d.set_item("number", f.meta.number)?;
            d.set_item("file_size", f.meta.file_size)?;
            d.set_item("smallest_key", PyBytes::new(py, f.smallest_user_key()))?;
            d.set_item("largest_key", PyBytes::new(py, f.largest_user_key()))?;
            out.append(d)?;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "Db({:?}{})",
            self.path.display().to_string(),
            self.handle.repr_suffix()
        )
    }
}
}

/// The walk's messages: chunks of keys, or the error that ended it.
type KeyChunks = Receiver<Result<Vec<Vec<u8>>, DbError>>;

/// An iterator over a database's live keys (``Db.live_keys()``). One
/// thread at a time may call ``next()`` (another gets ``RuntimeError``,
/// PyO3's "already borrowed"). ``next()`` raises ``ClosedError`` once the
/// database is closed, and ``RuntimeError`` in a process forked after the
/// iterator was made.
#[pyclass(module = "rocks_ribbon", name = "LiveKeys")]
pub struct LiveKeys {
    /// `None` once the walk has ended. (A `Mutex` only to make the class
    /// `Sync`; `__next__` has `&mut self` and never blocks on it.)
    rx: Mutex<Option<KeyChunks>>,
    chunk: std::vec::IntoIter<Vec<u8>>,
    /// The database it reads (closing it ends the iteration).
    db: Py<Db>,
    /// The process that made it, the one its reader thread runs in: a
    /// child forked later has no such thread, and `recv` would wait
    /// forever.
    pid: u32,
}

impl LiveKeys {
    /// Ends the iteration here (the reader thread stops at its next send).
    fn stop(&mut self) {
        *self.rx.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        self.chunk = Vec::new().into_iter();
    }
}

#[pymethods]
impl LiveKeys {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        if std::process::id() != self.pid {
            return Err(PyRuntimeError::new_err(
                "LiveKeys: used in a process forked after it was made (its reader thread runs in the \
                 parent): call Db.live_keys() again in this process",
            ));
        }
        if let Err(closed) = self.db.get().get() {
            self.stop();
            return Err(closed);
        }
        loop {
            if let Some(k) = self.chunk.next() {
                return Ok(PyBytes::new(py, &k));
            }
            let slot = self.rx.get_mut().unwrap_or_else(|p| p.into_inner());
            let Some(rx) = slot.take() else {
                return Err(PyStopIteration::new_err(()));
            };
            let (rx, got) = py.detach(move || {
                let got = rx.recv();
                (rx, got)
            });
            match got {
                Ok(Ok(chunk)) => {
                    self.chunk = chunk.into_iter();
                    *self.rx.get_mut().unwrap_or_else(|p| p.into_inner()) = Some(rx);
                }
                Ok(Err(e)) => return Err(db_error(e)),
                // The walk ended after its last chunk.
                Err(_) => return Err(PyStopIteration::new_err(())),
            }
        }
    }
}
