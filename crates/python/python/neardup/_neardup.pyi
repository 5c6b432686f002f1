"""Type stubs of the native module ``neardup._neardup`` (Rust, PyO3)."""

import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

ProfileArg = Union[str, Dict[str, Any]]
PolicyArg = Union["Policy", Dict[str, Any], str, None]
Texts = Union[Sequence[str], Iterable[str], npt.NDArray[Any], Any]
Signature = Union["MinHash", npt.NDArray[np.uint32], npt.NDArray[np.uint64], Sequence[int]]

class NeardupError(ValueError):
    """An error of the neardup library, with the library's message."""

class Fingerprint:
    """The fingerprints of one text."""

    @property
    def simhash(self) -> int: ...
    @property
    def simhash_hex(self) -> str: ...
    @property
    def bits(self) -> int: ...
    @property
    def digest(self) -> str: ...
    @property
    def minhash(self) -> Optional[List[int]]: ...
    @property
    def features(self) -> int: ...
    def distance(self, other: Fingerprint) -> int: ...
    def __eq__(self, other: object) -> bool: ...

class FingerprintBatch:
    """The fingerprints of many texts, in input order."""

    @property
    def simhash(self) -> npt.NDArray[np.uint64]:
        """``(n,)`` for 64-bit profiles, ``(n, 2)`` (high, low) for 128-bit ones."""
    @property
    def minhash(self) -> Optional[npt.NDArray[np.uint32]]:
        """``(n, num_perm)``, or None when the profile makes no MinHash signatures."""
    @property
    def digests(self) -> List[str]: ...
    @property
    def features(self) -> npt.NDArray[np.uint64]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, index: int) -> Fingerprint: ...

class Fingerprinter:
    """Turns texts into fingerprints under one profile (a built-in name, a dict or JSON)."""

    def __init__(self, profile: Optional[ProfileArg] = None) -> None: ...
    @property
    def profile(self) -> Dict[str, Any]: ...
    def fingerprint(self, text: str) -> Fingerprint: ...
    def fingerprint_many(self, texts: Texts) -> FingerprintBatch:
        """In parallel, with the GIL released; lists, NumPy, pandas and pyarrow string arrays."""
    def minhash_many(self, texts: Texts) -> npt.NDArray[np.uint32]:
        """``(n, num_perm)`` MinHash signatures alone (the profile must make them)."""
    def normalize(self, text: str) -> str: ...
    def feature_set(self, text: str) -> npt.NDArray[np.uint64]: ...

class Policy:
    """The near-duplicate decision, whole (the CLI's --policy-file / --show-policy)."""

    def __init__(
        self,
        profile: Optional[ProfileArg] = None,
        method: Optional[str] = None,
        k: Optional[int] = None,
        threshold: Optional[float] = None,
        verify: Optional[str] = None,
        min_length_ratio: Optional[float] = None,
        bits: Optional[int] = None,
    ) -> None: ...
    @staticmethod
    def default() -> Policy: ...
    @staticmethod
    def from_json(policy: Union[str, Dict[str, Any]]) -> Policy: ...
    @staticmethod
    def from_dict(policy: Dict[str, Any]) -> Policy: ...
    def to_json(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def compare(self, a: str, b: str) -> Dict[str, Any]: ...
    def describe(self) -> str: ...
    @property
    def profile(self) -> str: ...
    @property
    def method(self) -> str: ...
    @property
    def k(self) -> int: ...
    @property
    def threshold(self) -> float: ...
    @property
    def verify(self) -> Optional[str]: ...
    @property
    def min_length_ratio(self) -> float: ...
    def __eq__(self, other: object) -> bool: ...

def compare(a: str, b: str, policy: PolicyArg = None) -> Dict[str, Any]:
    """The decision: verdict, kind (for a duplicate), measure, value, threshold."""

def dedup(
    texts: Texts,
    policy: PolicyArg = None,
    keep: str = "first",
    fetched_at: Optional[List[Optional[int]]] = None,
    granularity: Optional[str] = None,
    min_chars: Optional[int] = None,
    seen: Optional[str] = None,
    units_only: bool = False,
    ngrams: Optional[int] = None,
    ngram_threshold: Optional[float] = None,
) -> Dict[str, Any]: ...

class SearchKeys:
    """The candidate search of a policy cut into shuffle keys (the engine's permuted tables or
    LSH bands), and the executors' steps of ``neardup.spark.dedup``. Fails for ``overlap``."""

    def __init__(self, policy: PolicyArg = None, expected_len: int = 0) -> None: ...
    @property
    def key_width(self) -> int:
        """Bytes of one key (0: exact duplicates only, no keys)."""
    @property
    def simhash_width(self) -> int:
        """Bytes of one SimHash fingerprint (8 or 16, big-endian)."""
    def fingerprint(
        self, offsets: npt.NDArray[np.int64], data: Union[bytes, npt.NDArray[np.uint8]]
    ) -> Dict[str, Any]:
        """Of the texts of an Arrow string column (``offsets``, ``len + 1``, into ``data``,
        bytes or a NumPy ``uint8`` view of the column's buffer, read in place):
        ``digest``, ``digest_width``, ``simhash`` (bytes end to end), ``keys`` (bytes end to
        end) and ``key_offsets`` (int32, ``len + 1``); parallel, GIL released."""
    @property
    def cuts_from_simhash(self) -> bool:
        """Whether ``cut`` makes the keys from SimHash values alone (the SimHash methods)."""
    def cut(self, simhashes: bytes) -> Dict[str, Any]:
        """The ``keys`` and ``key_offsets`` (as ``fingerprint`` gives them) of the SimHash
        values ``simhashes`` (``simhash_width`` bytes each, end to end, big-endian); the
        SimHash methods only."""
    def links(
        self,
        rows: npt.NDArray[np.int64],
        simhashes: bytes,
        offsets: npt.NDArray[np.int64],
    ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Links ``(a, b)`` within groups (``offsets``) joining the members as every candidate
        pair of the group would: at most one a member."""

class UnitKeys:
    """The rule below the document of a policy (with ``granularity``, ``min_chars``,
    ``ngrams``, ``ngram_threshold`` as :func:`dedup` takes them), and the executors' steps of
    ``neardup.spark_units.dedup_units``."""

    def __init__(
        self,
        policy: PolicyArg = None,
        granularity: Optional[str] = None,
        min_chars: Optional[int] = None,
        ngrams: Optional[int] = None,
        ngram_threshold: Optional[float] = None,
    ) -> None: ...
    @property
    def policy_json(self) -> str:
        """The policy with its rule below the document, as JSON."""
    def keys(
        self, offsets: npt.NDArray[np.int64], data: bytes
    ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``(key_offsets, keys)`` of the texts of an Arrow string column: text ``i``'s keys
        are ``keys[key_offsets[i]:key_offsets[i + 1]]`` (the 64-bit keys' bits)."""
    def rewrite(
        self,
        offsets: npt.NDArray[np.int64],
        data: bytes,
        repeat_offsets: npt.NDArray[np.int64],
        repeats: npt.NDArray[np.int32],
    ) -> Dict[str, Any]:
        """The texts rewritten from the indexes of their repeated keys: ``text_offsets`` into
        ``text``, per text ``units``, ``units_removed``, ``bytes_removed``, ``dropped``, and
        the removed byte ranges: text ``i``'s are ``spans[2 * span_offsets[i]:2 *
        span_offsets[i + 1]]``, start and end in turn."""
    def seen_count(self, path: Union[str, os.PathLike[str]]) -> int:
        """Keys the seen file at ``path`` holds (the CLI's ``--seen`` format), once its keys
        are checked to be this rule's."""
    def read_seen(
        self, path: Union[str, os.PathLike[str]], first: int, count: int
    ) -> npt.NDArray[np.int64]:
        """Keys ``first`` to ``first + count`` of the seen file at ``path`` (fewer at its end)."""
    def write_seen(
        self, path: Union[str, os.PathLike[str]], chunks: Iterable[npt.NDArray[np.int64]]
    ) -> int:
        """Replaces the seen file at ``path`` by the keys of ``chunks`` (ascending as unsigned
        64-bit numbers; repeats written once); returns how many were written."""

def link_components(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """``(node, root)`` for every node of the links ``(a[i], b[i])``, ``root`` the smallest node
    of its component (union-find in one process)."""

class PartEngine:
    """The engine over parts of rows sorted by part and row (the last step of
    ``neardup.spark.dedup``): ``feed`` Arrow batches, then ``finish``."""

    def __init__(
        self,
        policy: PolicyArg = None,
        keep: str = "first",
        texts_in_memory: int = 64 << 20,
        memory: Optional[int] = None,
        whole_process: bool = False,
        threads: Optional[int] = None,
    ) -> None:
        """``memory``: bytes a part is decided within (``None``: the engine's default, 2 GiB);
        beyond it the engine spills to the system's temporary folder. Each run of the engine may
        add ``memory`` to the process's resident memory when the run began; with
        ``whole_process``, ``memory`` bounds the whole process (a hard limit on the worker, such
        as ``spark.executor.pyspark.memory``). ``threads``: of its own for its parallel work
        (``None``: rayon's global pool)."""
    def feed(
        self,
        parts: npt.NDArray[np.int64],
        rows: npt.NDArray[np.int64],
        offsets: npt.NDArray[np.int64],
        data: Union[bytes, npt.NDArray[np.uint8]],
        fetched_at: Optional[npt.NDArray[np.int64]] = None,
        dated: Optional[npt.NDArray[np.bool_]] = None,
        simhash: Union[bytes, npt.NDArray[np.uint8], None] = None,
        digest: Union[bytes, npt.NDArray[np.uint8], None] = None,
    ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The answers (row, cluster row or -1, duplicate_of row or -1) of the parts completed.
        ``simhash`` and ``digest``: the rows' fingerprints as ``SearchKeys.fingerprint`` made
        them (end to end), taken instead of fingerprinting the texts again (the first row's
        checked)."""
    @property
    def takes_fingerprints(self) -> bool:
        """Whether ``feed`` takes ``simhash`` and ``digest`` (a profile without MinHash)."""
    @property
    def threads(self) -> int: ...
    def finish(
        self,
    ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The answers of the last part."""

class JsonlLines:
    """The CLI's JSON Lines reader over batches of lines (the first step of
    ``neardup.spark.dedup_jsonl``): the records the CLI reads, bad ones skipped as it skips them."""

    def __init__(self, id_field: str = "id", text_field: str = "text") -> None: ...
    def read(
        self,
        offsets: npt.NDArray[np.int64],
        data: Union[bytes, npt.NDArray[np.uint8]],
        source: str,
        first_line: int,
    ) -> Dict[str, Any]:
        """``line`` (each record's index in the batch), ``bad`` (lines skipped as bad records),
        and per column (``id``, ``text``, ``url``, ``title``, ``fetched_at``) its offsets,
        bytes and validity."""
    def read_range(
        self,
        data: Union[bytes, npt.NDArray[np.uint8]],
        owned: int,
        at_end: bool,
        source: str,
        first_line: int,
    ) -> Dict[str, Any]:
        """The lines of a piece of a file (``data`` from a line's start) that start before byte
        ``owned``, split at ``\\n``: :meth:`read`'s dict, and ``lines`` (lines read),
        ``consumed`` (their bytes) and ``done`` (no line of the piece left)."""

class MinHashLsh:
    """MinHash LSH under int ids, banded as datasketch bands."""

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        weights: Tuple[float, float] = (0.5, 0.5),
        params: Optional[Tuple[int, int]] = None,
    ) -> None: ...
    @property
    def params(self) -> Tuple[int, int]: ...
    def insert(self, id: int, signature: Signature) -> None: ...
    def insert_many(self, ids: Sequence[int], signatures: npt.NDArray[np.uint32]) -> None: ...
    def query(self, signature: Signature) -> List[int]: ...
    def remove(self, id: int) -> bool: ...
    def __len__(self) -> int: ...

def minhash_candidate_pairs(
    signatures: npt.NDArray[np.uint32],
    threshold: float = 0.9,
    params: Optional[Tuple[int, int]] = None,
) -> npt.NDArray[np.uint32]:
    """``(m, 2)`` row pairs sharing a band, ``a < b``, sorted."""

def python_simhash(text: str, f: int = 64) -> int: ...
def python_simhash_many(texts: Texts) -> npt.NDArray[np.uint64]: ...
def python_simhash_features(features: Iterable[Union[str, Tuple[str, float]]], f: int = 64) -> int: ...

class SimhashIndexCore:
    def __init__(self, k: int, expected: int = 0) -> None: ...
    def add(self, id: str, value: int) -> None: ...
    def delete(self, id: str, value: int) -> None: ...
    def get_near_dups(self, value: int) -> List[str]: ...
    def __len__(self) -> int: ...

class MinHash:
    """datasketch's MinHash (schemes affine32, legacy, affine64): the same hashvalues."""

    def __init__(
        self,
        num_perm: int = 128,
        seed: int = 1,
        hashvalues: Optional[Sequence[int]] = None,
        scheme: Optional[str] = None,
    ) -> None: ...
    def update(self, data: bytes) -> None: ...
    def update_batch(self, data: Iterable[bytes]) -> None: ...
    def jaccard(self, other: MinHash) -> float: ...
    def count(self) -> float: ...
    def merge(self, other: MinHash) -> None: ...
    def digest(self) -> npt.NDArray[Any]: ...
    @property
    def hashvalues(self) -> npt.NDArray[Any]: ...
    @property
    def scheme(self) -> str: ...
    @property
    def seed(self) -> int: ...
    def is_empty(self) -> bool: ...
    def clear(self) -> None: ...
    def copy(self) -> MinHash: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
