//! Keys handed in from Python: one `bytes`, a sequence of `bytes`, or a
//! NumPy array of fixed-width bytes (dtype `S<n>`), turned into byte
//! slices that stay valid while the GIL is released.
//!
//! Contracts: every key of a batch is a `bytes` object (a `str`,
//! `bytearray` or `int` is a `TypeError` naming its index, never a silent
//! conversion); the slices borrow `bytes` objects this module holds a
//! strong reference to (immutable, so they cannot change while the GIL is
//! released), or one `bytes` copy of the NumPy array's data (made with
//! `ndarray.tobytes()`, so a later write to the array cannot race the
//! batch). A NumPy `S<n>` element is the key NumPy itself gives for it:
//! its bytes up to the trailing NUL padding (`numpy.array([b"ab"],
//! dtype="S4")[0] == b"ab"`), so keys that end in NUL bytes are given as a
//! list of `bytes`, not an `S` array.

use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

/// The Python objects a batch of keys borrows from.
pub enum KeySource<'py> {
    /// One `bytes` object per key (strong references).
    Objects(Vec<Bound<'py, PyBytes>>),
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
        let mut out = Vec::new();
        if let Ok(list) = keys.cast::<PyList>() {
            out.reserve(list.len());
            for (i, item) in list.iter().enumerate() {
                out.push(key_bytes(i, item)?);
            }
        } else if let Ok(tuple) = keys.cast::<PyTuple>() {
            out.reserve(tuple.len());
            for (i, item) in tuple.iter().enumerate() {
                out.push(key_bytes(i, item)?);
            }
        } else {
            for (i, item) in keys.try_iter()?.enumerate() {
                out.push(key_bytes(i, item?)?);
            }
        }
        Ok(KeySource::Objects(out))
    }

    /// The keys, in order, as slices into the held objects.
    pub fn slices(&self) -> Vec<&[u8]> {
        match self.view() {
            KeyView::Slices(v) => v,
            KeyView::Fixed { data, width, len } => fixed_slices(data, width, len),
        }
    }

    /// The keys as a view that may cross into code run without the GIL
    /// (`Send`): slices of `bytes` objects, or the NumPy array's bytes.
    pub fn view(&self) -> KeyView<'_> {
        match self {
            KeySource::Objects(v) => KeyView::Slices(v.iter().map(|b| b.as_bytes()).collect()),
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
    /// One slice per key.
    Slices(Vec<&'a [u8]>),
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

impl KeyView<'_> {
    /// RocksDB's 64-bit hash of each key, in order (no slice vector for
    /// NumPy arrays: the hashes are taken straight from the array's bytes).
    pub fn hashes(&self) -> Vec<u64> {
        use ribbon::core::hash::get_slice_hash64;
        match self {
            KeyView::Slices(v) => v.iter().map(|k| get_slice_hash64(k)).collect(),
            KeyView::Fixed { data, width, len } => {
                if *width == 0 {
                    return vec![get_slice_hash64(&[]); *len];
                }
                data.chunks_exact(*width)
                    .map(|k| get_slice_hash64(strip_nuls(k)))
                    .collect()
            }
        }
    }

    /// Calls `f` with each key, in order.
    pub fn for_each(&self, mut f: impl FnMut(&[u8])) {
        match self {
            KeyView::Slices(v) => v.iter().for_each(|k| f(k)),
            KeyView::Fixed { len, width: 0, .. } => (0..*len).for_each(|_| f(&[])),
            KeyView::Fixed { data, width, .. } => data.chunks_exact(*width).for_each(|k| f(strip_nuls(k))),
        }
    }

    /// The keys as slices.
    pub fn slices(&self) -> Vec<&[u8]> {
        match self {
            KeyView::Slices(v) => v.clone(),
            KeyView::Fixed { data, width, len } => fixed_slices(data, *width, *len),
        }
    }
}

/// A NumPy `S` element without its trailing NUL padding.
fn strip_nuls(k: &[u8]) -> &[u8] {
    let end = k.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
    &k[..end]
}

/// Key `i` of a batch as `bytes`, or a `TypeError` naming its index and type.
fn key_bytes<'py>(i: usize, item: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    item.cast_into::<PyBytes>().map_err(|e| {
        let name = e
            .into_inner()
            .get_type()
            .name()
            .map_or_else(|_| "another type".to_owned(), |n| n.to_string());
        PyTypeError::new_err(format!("keys[{i}]: bytes expected, got {name}"))
    })
}

/// The elements of a NumPy `S<width>` array's bytes, each without its
/// trailing NUL padding (as NumPy reads an element).
pub fn fixed_slices(data: &[u8], width: usize, len: usize) -> Vec<&[u8]> {
    if width == 0 {
        // An `S0` array holds `len` empty keys and no bytes.
        return vec![&[][..]; len];
    }
    data.chunks_exact(width).map(strip_nuls).collect()
}
