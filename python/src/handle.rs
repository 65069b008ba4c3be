//! Closable handles: the one owner of the rules every class with a
//! `close()` follows (`Db`, `SstFile`, `Ribbon`).
//!
//! Contracts: after `close()` every query raises `ClosedError` with the
//! class's one-line message (naming the file where there is one); closing
//! twice is allowed; `closed` says whether `close()` was called; `with x:`
//! returns `x` and closes it on the way out, letting any exception
//! propagate (`__exit__` returns `False`). A query running on another
//! thread keeps what it borrowed until it returns.

use crate::errors::ClosedError;
use pyo3::prelude::*;
use std::sync::{PoisonError, RwLock, RwLockReadGuard};

/// An open value, until `close()` drops it.
///
/// A poisoned lock is read through: the slot holds either the value or
/// nothing, both valid whatever a panicking holder was doing.
pub struct Handle<T> {
    slot: RwLock<Option<T>>,
    /// The `ClosedError` message of a query after `close()`.
    closed_message: String,
}

impl<T> Handle<T> {
    /// An open handle of `value`; `closed_message` is the one-line
    /// `ClosedError` a query gets after `close()`.
    pub fn new(value: T, closed_message: String) -> Self {
        Self {
            slot: RwLock::new(Some(value)),
            closed_message,
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Option<T>> {
        self.slot.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the open value (under a read lock, so `close()` waits
    /// for it); `ClosedError` after `close()`.
    pub fn with<R>(&self, f: impl FnOnce(&T) -> R) -> PyResult<R> {
        match self.read().as_ref() {
            Some(value) => Ok(f(value)),
            None => Err(ClosedError::new_err(self.closed_message.clone())),
        }
    }

    /// Drops the value; later queries raise `ClosedError`. Idempotent.
    pub fn close(&self) {
        *self.slot.write().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Whether `close()` was called.
    pub fn is_closed(&self) -> bool {
        self.read().is_none()
    }

    /// `", closed"` once closed, else `""`: the tail of a class's `repr`.
    pub fn repr_suffix(&self) -> &'static str {
        if self.is_closed() {
            ", closed"
        } else {
            ""
        }
    }
}

impl<T: Clone> Handle<T> {
    /// A clone of the open value (an `Arc`, for a query that outlives the
    /// lock); `ClosedError` after `close()`.
    pub fn get(&self) -> PyResult<T> {
        self.with(T::clone)
    }
}

/// `#[pymethods] impl $class { ... }` for a class whose field `handle` is a
/// [`Handle`]: the methods given, then `close()` (with the doc comment given
/// first, which says what closing frees), the `closed` getter, and
/// `__enter__`/`__exit__` (the context-manager protocol: `__exit__` closes
/// and returns `False`, so an exception propagates).
///
/// (A macro, as PyO3 takes one `#[pymethods]` block per class and no macro
/// inside it.)
macro_rules! closable_pymethods {
    (
        $(#[doc = $close_doc:literal])+
        impl $class:ident {
            $($methods:tt)*
        }
    ) => {
        #[pymethods]
        impl $class {
            $($methods)*

            $(#[doc = $close_doc])+
            fn close(&self) {
                self.handle.close()
            }

            /// Whether ``close()`` was called.
            #[getter]
            fn closed(&self) -> bool {
                self.handle.is_closed()
            }

            fn __enter__(slf: Py<Self>) -> Py<Self> {
                slf
            }

            fn __exit__(
                &self,
                _ty: Option<&Bound<'_, PyAny>>,
                _value: Option<&Bound<'_, PyAny>>,
                _tb: Option<&Bound<'_, PyAny>>,
            ) -> bool {
                self.close();
                false
            }
        }
    };
}
pub(crate) use closable_pymethods;
