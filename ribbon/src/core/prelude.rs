//! What the standard library's prelude gives a module and `core`'s does
//! not: the `alloc` types and macros, for the `no_std` build. Modules that
//! need them `use crate::core::prelude::*;` (with `std` they shadow the
//! standard prelude's same items).

pub(crate) use alloc::boxed::Box;
pub(crate) use alloc::format;
pub(crate) use alloc::string::{String, ToString};
pub(crate) use alloc::vec;
pub(crate) use alloc::vec::Vec;
