//! Keys handed in from Python: one `bytes`, a sequence of `bytes`, or a
//! NumPy array of fixed-width bytes (dtype `S<n>`), turned into byte
//! slices that stay valid while the GIL is released.
//!
//! Contracts: every key of a batch is a `bytes` object (a `str`,
//! `bytearray` or `int` is a `TypeError` naming its index, never a silent
//! conversion); the keys of `bytes` objects are copied end to end into one
//! buffer under the GIL (one pass, each object touched once), and a NumPy
//! array's data into one `bytes` copy (`ndarray.tobytes()`), so the work
//! done with the GIL released reads memory no other thread can change. A NumPy `S<n>` element is the key NumPy itself gives for it:
//! its bytes up to the trailing NUL padding (`numpy.array([b"ab"],
//! dtype="S4")[0] == b"ab"`), so keys that end in NUL bytes are given as a
//! list of `bytes`, not an `S` array.

use numpy::{PyArray1, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

/// The answers of a batch query: one NumPy bool per key, in order.
pub type Answers<'py> = PyResult<Bound<'py, PyArray1<bool>>>;

/// Keys per chunk of a batch query: the library's own buffers for one
/// chunk (hashes, key slices, answers) stay small whatever the batch's
/// size, so the only buffers sized by the whole batch are the ones made
/// here, fallibly (a `MemoryError`, never an abort).
pub const CHUNK_KEYS: usize = 1 << 16;

/// A batch query, the one path every `*_many` method of a filter takes:
/// reads `keys` ([`KeySource::new`]: a list of `bytes` or a NumPy `S<n>`
/// array), allocates the answers (fallibly), runs `answer` on each chunk of
/// at most [`CHUNK_KEYS`] keys and its answers with the GIL released, and
/// returns the answers, one per key in order, as a NumPy bool array (the
/// vector is moved, not copied). An error of `answer` is raised as it is.
pub fn answer_many<'py>(
    py: Python<'py>,
    keys: &Bound<'py, PyAny>,
    answer: impl Fn(&KeyView<'_>, &mut [bool]) -> PyResult<()> + Send + Sync,
) -> Answers<'py> {
    let source = KeySource::new(keys)?;
    let view = source.view();
    let mut answers = filled(false, view.len(), "the answers")?;
    py.detach(|| view.for_each_chunk(&mut answers, &answer))?;
    Ok(PyArray1::from_vec(py, answers))
}

/// `MemoryError` for a buffer of `n` elements (`what`) that could not be
/// allocated.
pub fn memory_error(what: &str, n: usize) -> PyErr {
    PyMemoryError::new_err(format!(
        "cannot allocate {what} for {n} keys: the batch is too large for the memory available"
    ))
}

/// An empty vector with room for exactly `n` elements, or `MemoryError`.
pub fn with_room<T>(n: usize, what: &str) -> PyResult<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| memory_error(what, n))?;
    Ok(v)
}

/// A copy of the caller's bytes, or `MemoryError`.
pub fn copy_bytes(data: &[u8]) -> PyResult<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(data.len())
        .map_err(|_| PyMemoryError::new_err(format!("cannot allocate a copy of {} bytes", data.len())))?;
    v.extend_from_slice(data);
    Ok(v)
}

/// `n` copies of `value`, or `MemoryError`.
pub fn filled<T: Clone>(value: T, n: usize, what: &str) -> PyResult<Vec<T>> {
    let mut v = with_room(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// A batch of keys as read from Python.
pub enum KeySource<'py> {
    /// The keys of `bytes` objects, copied end to end in one pass under the
    /// GIL (each object is touched once; the work without the GIL then
    /// reads sequential memory): key `i` is `data[ends[i - 1]..ends[i]]`.
    Packed {
        /// The keys' bytes, end to end.
        data: Vec<u8>,
        /// Where each key ends in `data`.
        ends: Vec<usize>,
    },
    /// The bytes of a NumPy `S<width>` array, `width` bytes per key.
    Fixed {
        /// The array's data, copied once (`ndarray.tobytes()`).
        data: Bound<'py, PyBytes>,
        /// Bytes per element (the dtype's item size).
        width: usize,
        /// Elements.
        len: usize,
    },
}

impl<'py> KeySource<'py> {
    /// Reads `keys`: a NumPy array of dtype `S<n>` (one dimension), or any
    /// iterable of `bytes` (a list and a tuple are read directly).
    pub fn new(keys: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(array) = keys.cast::<PyUntypedArray>() {
            let dtype = array.dtype();
            if dtype.kind() == b'S' {
                if array.ndim() != 1 {
                    return Err(PyTypeError::new_err(format!(
                        "keys: a NumPy 'S' array of one dimension is expected, got {} dimensions",
                        array.ndim()
                    )));
                }
                let width = dtype.itemsize();
                let data = keys.call_method0("tobytes")?.cast_into::<PyBytes>()?;
                return Ok(KeySource::Fixed {
                    data,
                    width,
                    len: array.len(),
                });
            }
            if dtype.kind() != b'O' {
                return Err(PyTypeError::new_err(format!(
                    "keys: a NumPy array of fixed-width bytes (dtype 'S<n>') or of bytes objects is expected, got dtype {}",
                    dtype
                )));
            }
        }
        if keys.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(
                "keys: a list of bytes or a NumPy 'S' array is expected, got one bytes object (wrap it in a list, or use may_match)",
            ));
        }
        let mut data: Vec<u8> = Vec::new();
        let mut ends: Vec<usize> = Vec::new();
        // Every buffer grows fallibly: a batch too large is a MemoryError.
        let mut push = |i: usize, item: &Bound<'py, PyAny>| -> PyResult<()> {
            let k = key_bytes(i, item)?.as_bytes();
            data.try_reserve(k.len())
                .map_err(|_| memory_error("the keys' bytes", i + 1))?;
            ends.try_reserve(1)
                .map_err(|_| memory_error("the key offsets", i + 1))?;
            data.extend_from_slice(k);
            ends.push(data.len());
            Ok(())
        };
        if let Ok(list) = keys.cast::<PyList>() {
            for (i, item) in list.iter().enumerate() {
                push(i, &item)?;
            }
        } else if let Ok(tuple) = keys.cast::<PyTuple>() {
            for (i, item) in tuple.iter().enumerate() {
                push(i, &item)?;
            }
        } else {
            for (i, item) in keys.try_iter()?.enumerate() {
                push(i, &item?)?;
            }
        }
        Ok(KeySource::Packed { data, ends })
    }

    /// The keys, in order, as slices into the held objects (`MemoryError`
    /// when the vector cannot be allocated).
    pub fn slices(&self) -> PyResult<Vec<&[u8]>> {
        self.view().slices()
    }

    /// The keys as a view that may cross into code run without the GIL
    /// (`Send`): slices of `bytes` objects, or the NumPy array's bytes.
    pub fn view(&self) -> KeyView<'_> {
        match self {
            KeySource::Packed { data, ends } => KeyView::Packed { data, ends, start: 0 },
            KeySource::Fixed { data, width, len } => KeyView::Fixed {
                data: data.as_bytes(),
                width: *width,
                len: *len,
            },
        }
    }
}

/// Keys borrowed from the objects of a [`KeySource`], for work done with
/// the GIL released.
pub enum KeyView<'a> {
    /// Keys end to end, and where each ends.
    Packed {
        /// The keys' bytes.
        data: &'a [u8],
        /// Where each key ends in `data`.
        ends: &'a [usize],
        /// Where the first key starts in `data`.
        start: usize,
    },
    /// `len` keys of `width` bytes each (NUL padding stripped when read).
    Fixed {
        /// The array's bytes.
        data: &'a [u8],
        /// Bytes per key.
        width: usize,
        /// Keys.
        len: usize,
    },
}

impl<'a> KeyView<'a> {
    /// RocksDB's 64-bit hash of each key, in order (no slice vector for
    /// NumPy arrays: the hashes are taken straight from the array's
    /// bytes); `MemoryError` when the vector cannot be allocated.
    pub fn hashes(&self) -> PyResult<Vec<u64>> {
        use ribbon::core::hash::get_slice_hash64;
        let mut out = with_room(self.len(), "the key hashes")?;
        self.for_each(|k| out.push(get_slice_hash64(k)));
        Ok(out)
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        match self {
            KeyView::Packed { ends, .. } => ends.len(),
            KeyView::Fixed { len, .. } => *len,
        }
    }

    /// Keys `from..to` (`from <= to <= len`) as a view of their own.
    pub fn range(&self, from: usize, to: usize) -> KeyView<'a> {
        match *self {
            KeyView::Packed { data, ends, start } => KeyView::Packed {
                data,
                ends: &ends[from..to],
                start: if from == 0 { start } else { ends[from - 1] },
            },
            KeyView::Fixed { data, width, .. } => KeyView::Fixed {
                data: &data[from * width..to * width],
                width,
                len: to - from,
            },
        }
    }

    /// Runs `f` on each chunk of at most [`CHUNK_KEYS`] keys, in order,
    /// with the matching chunk of `out` (one element per key).
    pub fn for_each_chunk<T>(
        &self,
        out: &mut [T],
        f: impl Fn(&KeyView<'_>, &mut [T]) -> PyResult<()>,
    ) -> PyResult<()> {
        for (i, part) in out.chunks_mut(CHUNK_KEYS).enumerate() {
            let from = i * CHUNK_KEYS;
            f(&self.range(from, from + part.len()), part)?;
        }
        Ok(())
    }

    /// Calls `f` with each key, in order.
    pub fn for_each(&self, mut f: impl FnMut(&'a [u8])) {
        match self {
            KeyView::Packed { data, ends, start } => {
                let data: &'a [u8] = data;
                let mut start = *start;
                for &end in ends.iter() {
                    f(&data[start..end]);
                    start = end;
                }
            }
            KeyView::Fixed { len, width: 0, .. } => (0..*len).for_each(|_| f(&[])),
            KeyView::Fixed { data, width, .. } => {
                let data: &'a [u8] = data;
                data.chunks_exact(*width).for_each(|k| f(strip_nuls(k)))
            }
        }
    }

    /// The keys as slices; `MemoryError` when the vector cannot be
    /// allocated.
    pub fn slices(&self) -> PyResult<Vec<&'a [u8]>> {
        let mut out = with_room(self.len(), "the key slices")?;
        self.for_each(|k| out.push(k));
        Ok(out)
    }
}

/// A NumPy `S` element without its trailing NUL padding.
fn strip_nuls(k: &[u8]) -> &[u8] {
    let end = k.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    &k[..end]
}

/// Key `i` of a batch as `bytes`, or a `TypeError` naming its index and type.
fn key_bytes<'a, 'py>(i: usize, item: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, PyBytes>> {
    item.cast::<PyBytes>().map_err(|_| {
        let name = item
            .get_type()
            .name()
            .map_or_else(|_| "another type".to_owned(), |n| n.to_string());
        PyTypeError::new_err(format!("keys[{i}]: bytes expected, got {name}"))
    })
}
