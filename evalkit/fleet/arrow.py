"""A ``score_ledger`` table as it travels from a worker: one Arrow IPC stream, and back.

Every column is dictionary-encoded (a ledger repeats its dimension ids, statuses, scores and
most evidence texts; values as UTF-8 bytes, lone surrogates included, since a ledger's JSON may
hold them), and the stream's buffers are zstd-compressed where pyarrow has the codec:
a 500-session table is ~40 KB instead of ~900 KB as a pickled object-dtype frame, and no Python
object is pickled per row. The ``score`` column travels as the text of each number (``repr``
of a float, the digits of an int, null for ``None``), so decoding gives back the very values
``score_ledger`` produced: an int stays an int of any size, a float keeps every bit.

Decoding builds the frame ``score_ledger`` returns (object columns) plus the directory column;
rows whose strings are equal share one Python object, so a large fleet costs a pointer per cell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

__all__ = ["decode_ledger_tables", "encode_ledger_table"]

_INT_TEXT = re.compile(r"-?[0-9]+")
_CODEC = "zstd"


def _score_text(value: Any) -> str | None:
    """A score as text that decodes to the same value and type; ``None`` stays null."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        # score_ledger writes json_number of a number: anything else is a contract break
        raise EvalkitError(f"score {value!r} ({type(value).__name__}) is not a JSON number")
    return str(value) if isinstance(value, int) else repr(value)


def _score_value(text: str) -> int | float:
    return int(text) if _INT_TEXT.fullmatch(text) else float(text)


def _columns() -> tuple[str, ...]:
    from evalkit.scoring.engine import LEDGER_COLUMNS

    return LEDGER_COLUMNS


def _dictionary(values: Sequence[str | None]) -> pa.DictionaryArray:
    """Strings as a dictionary array: distinct values once (UTF-8 bytes, lone surrogates kept
    with ``surrogatepass``: a ledger's JSON may hold them), one int32 index per row.
    """
    import pyarrow as pa

    index: dict[str, int] = {}
    codes = [None if v is None else index.setdefault(v, len(index)) for v in values]
    words = [v.encode("utf-8", "surrogatepass") for v in index]
    return pa.DictionaryArray.from_arrays(
        pa.array(codes, type=pa.int32()), pa.array(words, type=pa.binary())
    )


def encode_ledger_table(frame: pd.DataFrame) -> bytes:
    """``score_ledger``'s frame as an Arrow IPC stream of dictionary-encoded columns."""
    import pyarrow as pa

    arrays = {}
    for name in _columns():
        values = frame[name].tolist()
        if name == "score":
            values = [_score_text(v) for v in values]
        arrays[name] = _dictionary(values)
    table = pa.table(arrays)
    codec = _CODEC if pa.Codec.is_available(_CODEC) else None
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=codec)
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def _objects(column: pa.ChunkedArray, convert: Any = None) -> np.ndarray:
    """A dictionary column as an object array: each dictionary value is made once and every
    row points at it; null rows are ``None``.
    """
    import numpy as np

    parts = []
    for chunk in column.chunks:
        values = [w.decode("utf-8", "surrogatepass") for w in chunk.dictionary.to_pylist()]
        if convert is not None:
            values = [convert(v) for v in values]
        table = np.empty(len(values) + 1, dtype=object)
        table[: len(values)] = values  # the extra last slot stays None, for null rows
        indices = chunk.indices.fill_null(len(values)).to_numpy(zero_copy_only=False)
        parts.append(table[indices])
    return np.concatenate(parts) if parts else np.empty(0, dtype=object)


def decode_ledger_tables(payloads: Sequence[tuple[str, bytes]], dir_column: str) -> pd.DataFrame:
    """Frames of :func:`encode_ledger_table` streams, stacked in the given order, with the
    directory each came from in ``dir_column`` (pandas' default string dtype).
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    names = _columns()
    columns: dict[str, list[np.ndarray]] = {name: [] for name in names}
    dirs: list[np.ndarray] = []
    for metrics_dir, payload in payloads:
        table = pa.ipc.open_stream(pa.BufferReader(payload)).read_all()
        for name in names:
            convert = _score_value if name == "score" else None
            columns[name].append(_objects(table.column(name), convert))
        label = np.empty(table.num_rows, dtype=object)
        label[:] = metrics_dir
        dirs.append(label)

    def stacked(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.empty(0, dtype=object)

    data: dict[str, Any] = {name: pd.Series(stacked(columns[name]), dtype=object) for name in names}
    data[dir_column] = pd.Series(stacked(dirs).tolist(), dtype="str")
    return pd.DataFrame(data)
