"""rocks_ribbon: RocksDB's filters, SST files and databases from Python.

Pure Rust underneath (PyO3); no RocksDB is needed. The main entry points:

* ``SstFile(path)``: an SST file's filter, asked as RocksDB's ``Get`` asks it
  (``may_match``, ``may_match_many``, ``prefix_may_match``, ``info``).
* ``build_filter(policy, keys)`` and ``FilterReader(data)``: the filter
  blocks RocksDB writes (``"ribbonfilter:10"``, ``"bloomfilter:10"``), bit
  for bit.
* ``Ribbon``: standalone and Balanced Ribbon filters (build, ``to_bytes``,
  ``from_bytes``, zero-copy ``open``).
* ``Db(path)``: a database directory's live keys and ``Get`` paths.
* ``Sketch``: set reconciliation (``diff`` of two key sets).

Batch queries take a list of ``bytes`` or a NumPy array of fixed-width
bytes (dtype ``S<n>``) and return a NumPy bool array; they release the GIL.
Errors are exceptions under ``rocks_ribbon.Error``.

>>> import rocks_ribbon
>>> data = rocks_ribbon.build_filter("ribbonfilter:10", [b"a", b"b"])
>>> rocks_ribbon.FilterReader(data).may_match_many([b"a", b"b"]).all()
True

``rocks_ribbon.spark`` (Spark helpers) is imported on demand only, as it
needs pyspark.
"""

from ._rocks_ribbon import (
    ClosedError,
    ConfigError,
    CorruptionError,
    Db,
    Error,
    FilterReader,
    IoError,
    LiveKeys,
    NotAFilterError,
    PolicyError,
    ReconcileError,
    Ribbon,
    Sketch,
    SstFile,
    UnsupportedError,
    __version__,
    build_filter,
    recommended_cells,
)

__all__ = [
    "ClosedError",
    "ConfigError",
    "CorruptionError",
    "Db",
    "Error",
    "FilterReader",
    "IoError",
    "LiveKeys",
    "NotAFilterError",
    "PolicyError",
    "ReconcileError",
    "Ribbon",
    "Sketch",
    "SstFile",
    "UnsupportedError",
    "__version__",
    "build_filter",
    "recommended_cells",
]


def _export_the_rest():
    """Also offers the extension's other public names (issue 35's sharded
    containers, registered by ``sharded.rs``) as ``rocks_ribbon.NAME``."""
    from . import _rocks_ribbon as ext

    for name in dir(ext):
        if not name.startswith("_") and name not in globals():
            globals()[name] = getattr(ext, name)


_export_the_rest()
del _export_the_rest

