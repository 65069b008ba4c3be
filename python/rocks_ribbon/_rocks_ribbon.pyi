"""Type stubs of the extension module rocks_ribbon._rocks_ribbon."""

import os
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Type, Union

import numpy as np
import numpy.typing as npt

__version__: str

#: A batch of keys: a sequence (or iterable) of ``bytes``, or a NumPy array
#: of fixed-width bytes (dtype ``S<n>``; each element without its trailing
#: NUL padding, as NumPy reads it).
Keys = Union[Sequence[bytes], Iterable[bytes], npt.NDArray[np.bytes_]]
BoolArray = npt.NDArray[np.bool_]
StrPath = Union[str, "os.PathLike[str]"]

class Error(Exception):
    """Every error of rocks_ribbon."""

class IoError(Error):
    """A file could not be read: missing, unreadable, or not a regular file."""

class CorruptionError(Error):
    """Bytes that are not what they claim: a checksum, length or format check failed."""

class UnsupportedError(Error):
    """Valid input that this reader refuses rather than answer wrong."""

class NotAFilterError(Error):
    """Bytes that are not a filter block RocksDB writes."""

class PolicyError(Error):
    """A filter policy string RocksDB would not accept, or one that writes no filter."""

class ConfigError(Error):
    """A standalone filter's settings are invalid, or its construction failed."""

class ReconcileError(Error):
    """Two sketches cannot be compared, or their difference cannot be decoded."""

class ClosedError(Error):
    """A query of a file, database or filter after close()."""

def build_filter(
    policy: str,
    keys: Keys,
    *,
    format_version: int = 7,
    level: Optional[int] = None,
) -> bytes:
    """The filter block RocksDB writes for ``keys`` under ``policy`` (e.g. ``"ribbonfilter:10"``).

    ``format_version`` 0 to 7, as RocksDB accepts (``ValueError`` otherwise); ``MemoryError``
    for a batch too large to hold."""

def _rust_build_seconds(policy: str, keys: Keys, *, format_version: int = 7) -> Tuple[float, bytes]:
    """The Rust build of ``build_filter``, timed in Rust alone (benchmarks)."""

def _rust_query_seconds(data: bytes, keys: Keys) -> Tuple[float, int]:
    """The Rust batch query of ``FilterReader.may_match_many``, timed in Rust alone (benchmarks)."""

def recommended_cells(estimated_difference: int) -> int:
    """IBF cells that decode a difference of about ``estimated_difference`` keys."""

class FilterReader:
    """A RocksDB filter block (checked: ``NotAFilterError``), opened for queries."""

    def __init__(self, data: bytes) -> None: ...
    def may_match(self, key: bytes) -> bool:
        """Whether ``key`` may be in the filter (``False``: certainly not)."""
    def may_match_many(self, keys: Keys) -> BoolArray:
        """``may_match`` of each key, in order (GIL released)."""
    @property
    def kind(self) -> str:
        """``Standard128Ribbon``, ``FastLocalBloom``, ``LegacyBloom``, ``AlwaysFalse`` or ``AlwaysTrue``."""
    def expected_fp_rate(self, num_keys: int) -> float:
        """RocksDB's FP-rate estimate for this filter holding ``num_keys`` keys."""
    def to_bytes(self) -> bytes: ...
    def __len__(self) -> int: ...

class Ribbon:
    """A standalone or Balanced Ribbon filter."""

    @staticmethod
    def build(
        keys: Keys,
        *,
        bits: float = 7.0,
        fp_rate: Optional[float] = None,
        width: int = 128,
        mode: str = "standard",
        balanced: bool = False,
        smash: bool = False,
        seed: int = 0,
        low_memory: bool = False,
    ) -> "Ribbon":
        """Builds a filter of ``keys`` (``ConfigError`` for invalid settings)."""
    @staticmethod
    def from_bytes(data: bytes) -> "Ribbon":
        """A filter from ``to_bytes()``'s bytes, checked whole (``CorruptionError``)."""
    @staticmethod
    def open(path: StrPath) -> "Ribbon":
        """Maps a filter file into memory (zero-copy), checked whole."""
    @staticmethod
    def from_rocksdb(data: bytes, num_keys: int = 0) -> "Ribbon":
        """The standalone twin of a RocksDB Standard128 Ribbon filter block (``NotAFilterError``
        for bytes ``FilterReader`` refuses, or another format)."""
    def may_match(self, key: bytes) -> bool: ...
    def __contains__(self, key: bytes) -> bool: ...
    def may_match_many(self, keys: Keys) -> BoolArray: ...
    def to_bytes(self) -> bytes: ...
    def info(self) -> Dict[str, Any]:
        """num_keys, num_slots, width, balanced, result_bits, bits_per_key, expected_fp_rate, ..."""
    def __len__(self) -> int: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> "Ribbon": ...
    def __exit__(
        self,
        ty: Optional[Type[BaseException]],
        value: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class SstFile:
    """A block-based SST file, opened as far as its filter."""

    def __init__(self, path: StrPath) -> None: ...
    @staticmethod
    def from_bytes(data: bytes) -> "SstFile": ...
    @property
    def path(self) -> Optional[Path]: ...
    def may_match(self, key: bytes) -> bool:
        """Whether the table's filter may hold user key ``key``, as RocksDB's ``Get`` asks it."""
    def may_match_many(self, keys: Keys) -> BoolArray:
        """``may_match`` of each key, in one batch (GIL released)."""
    def prefix_may_match(self, key: bytes) -> bool:
        """Whether a prefix seek to ``key`` may find keys (``UnsupportedError`` without a prefix extractor)."""
    def prefix_may_match_many(self, keys: Keys) -> BoolArray: ...
    def info(self) -> Dict[str, Any]:
        """The table and its filter (the ``ribbon sst info`` fields)."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> "SstFile": ...
    def __exit__(
        self,
        ty: Optional[Type[BaseException]],
        value: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class LiveKeys(Iterator[bytes]):
    """An iterator over a database's live keys. ``next()`` raises ``ClosedError`` once the
    database is closed, ``RuntimeError`` in a process forked after it was made."""

    def __iter__(self) -> "LiveKeys": ...
    def __next__(self) -> bytes: ...

class Db:
    """A RocksDB database directory, read without RocksDB."""

    def __init__(
        self,
        path: StrPath,
        column_family: str = "default",
        *,
        wal_dir: Optional[StrPath] = None,
        db_paths: Optional[Sequence[StrPath]] = None,
    ) -> None: ...
    @staticmethod
    def list_column_families(path: StrPath) -> List[str]:
        """The database's column family names, ``"default"`` first (from its MANIFEST)."""
    @property
    def path(self) -> Path: ...
    def live_keys(self) -> LiveKeys:
        """Each live user key once, in comparator order (as RocksDB's iterator)."""
    def get_path(self, key: bytes) -> Dict[str, Any]:
        """RocksDB's ``Get`` path of ``key``: ``memtable``, ``steps`` (files asked), ``found``."""
    def get_paths(self, keys: Keys) -> List[Dict[str, Any]]: ...
    def candidate_files(self, key: bytes) -> List[Path]: ...
    def files(self) -> List[Dict[str, Any]]: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> "Db": ...
    def __exit__(
        self,
        ty: Optional[Type[BaseException]],
        value: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...

class Sketch:
    """A key set's sketch for reconciliation (strata estimator and IBF)."""

    def __init__(self, cells: int = 0, *, seed: int = 0, chunk_bytes: int = 32) -> None: ...
    def insert(self, key: bytes) -> None: ...
    def insert_many(self, keys: Keys) -> None: ...
    @staticmethod
    def of_db(
        path: StrPath,
        cells: int = 0,
        *,
        seed: int = 0,
        chunk_bytes: int = 32,
        column_family: str = "default",
        wal_dir: Optional[StrPath] = None,
        db_paths: Optional[Sequence[StrPath]] = None,
    ) -> "Sketch": ...
    @staticmethod
    def of_sst(path: StrPath, cells: int = 0, *, seed: int = 0, chunk_bytes: int = 32) -> "Sketch": ...
    @staticmethod
    def from_bytes(data: bytes) -> "Sketch": ...
    def to_bytes(self) -> bytes: ...
    @property
    def keys(self) -> int: ...
    @property
    def cells(self) -> int: ...
    def estimate_difference(self, other: "Sketch") -> int: ...
    def diff(self, other: "Sketch") -> Tuple[List[bytes], List[bytes]]:
        """(keys only in self's set, keys only in other's), sorted; ``ReconcileError`` if undecodable."""

# Sharded (billion-key) containers: the building blocks of rocks_ribbon.spark
# and the reader of `ribbon big build`'s files.

#: The most shard bits a container may have.
MAX_SHARD_BITS: int
#: The length of a shard file's header (before its filter bytes).
SHARD_FILE_HEADER_LEN: int

def key_hash(key: bytes) -> int:
    """The 64-bit hash of ``key`` (RocksDB's ``GetSliceHash64``) that picks its shard."""
def shard_of(hash: int, shard_bits: int) -> int:
    """The shard of a key with 64-bit hash ``hash`` among ``2**shard_bits``."""
def shard_of_key(key: bytes, shard_bits: int) -> int:
    """``shard_of(key_hash(key), shard_bits)``."""
def hash_arrow(offsets: bytes, data: bytes, offset: int, length: int) -> bytes:
    """The keys of a ``large_binary`` Arrow array's buffers, hashed: 8 little-endian bytes per key."""
def build_shard(
    hashes: Sequence[bytes],
    shard: int,
    shard_bits: int,
    *,
    bits: float = 7.0,
    kind: str = "balanced",
    width: int = 64,
) -> bytes:
    """Shard ``shard``'s file from its keys' hashes (the bytes of ``ribbon big shard``)."""
def assemble(shard_bits: int, shard_files: Sequence[bytes]) -> bytes:
    """The container of the ``2**shard_bits`` shard files, in memory."""
def assemble_files(shard_bits: int, shard_paths: Sequence[StrPath], out_path: StrPath) -> int:
    """The container of the shard files at ``shard_paths``, written to ``out_path``; its length.

    Written through a temporary file created exclusively, never through a planted name; an
    ``out_path`` or shard that is not a regular file (a symlink, a FIFO) is an ``OSError``."""

class ShardRouter:
    """Hashes keys and holds each hash in its shard's buffer (inside one Spark task)."""

    def __init__(self, shard_bits: int) -> None: ...
    def add_arrow(self, offsets: bytes, data: bytes, offset: int, length: int) -> None: ...
    @property
    def buffered(self) -> int: ...
    def drain(self) -> List[Tuple[int, bytes]]: ...

class ShardedFilter:
    """A sharded filter file (``ribbon big build``, ``rocks_ribbon.spark``), memory-mapped."""

    def __init__(self, path: StrPath) -> None: ...
    @property
    def path(self) -> Path: ...
    @property
    def num_keys(self) -> int: ...
    @property
    def shard_bits(self) -> int: ...
    @property
    def file_len(self) -> int: ...
    @property
    def bits_per_key(self) -> float: ...
    @property
    def expected_fp_rate(self) -> float: ...
    def may_contain(self, key: bytes) -> bool: ...
    def may_contain_hash(self, hash: int) -> bool: ...
    def may_contain_many(self, keys: Keys) -> List[bool]: ...
    def may_contain_arrow(self, offsets: bytes, data: bytes, offset: int, length: int) -> bytes: ...
    def verify(self) -> None: ...
