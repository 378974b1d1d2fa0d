"""Reading a parquet file a user names, bounded in rows and memory before anything is decoded.

A parquet file is compressed and dictionary-encoded: a 932 KB file can hold 60 million rows,
which pandas turns into 7 GB of Python objects. :func:`read_parquet` reads the file through
:func:`evalkit.files.input.read_bytes` (a regular file, under the byte cap), refuses one whose
footer declares more than ``max_rows`` rows, or column pages over ``max_bytes`` uncompressed,
before decoding a value, then decodes batch by batch, counting rows and decoded bytes as they
come (a footer can lie), and refuses at the first batch over either cap, naming the file, the
count and the cap. Text columns are read dictionary-encoded and counted by the length of the
values their rows name, so one long value repeated on every row is refused before it is
expanded. Only the columns asked for are decoded. Needs pyarrow (the ``parquet`` extra);
pandas builds the frame.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.files.input import escape_surrogates, read_bytes

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_MAX_TABLE_BYTES", "DEFAULT_MAX_TABLE_ROWS", "read_parquet"]

#: Most rows a table read from a parquet file may have (a label table of 10,000 items, 10
#: raters and 20 repeats is 2 million rows).
DEFAULT_MAX_TABLE_ROWS = 2_000_000
#: Most bytes its decoded columns may take in memory (Arrow's count, before pandas).
DEFAULT_MAX_TABLE_BYTES = 512 << 20
_BATCH_ROWS = 65_536


def read_parquet(
    path: str | os.PathLike[str],
    what: str,
    *,
    columns: Sequence[str] | None = None,
    max_rows: int = DEFAULT_MAX_TABLE_ROWS,
    max_bytes: int = DEFAULT_MAX_TABLE_BYTES,
) -> pd.DataFrame:
    """The parquet file at ``path`` as a DataFrame, its ``columns`` (those present; None: all).

    Raises :class:`~evalkit.errors.EvalkitError` naming ``what`` and the path for a file over
    ``max_rows`` rows or ``max_bytes`` decoded bytes (before decoding them all), or one that is
    not parquet.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    shown = f"{what} {escape_surrogates(os.fsdecode(path))!r}"
    data = read_bytes(path, what)
    try:
        handle = pq.ParquetFile(io.BytesIO(data))
        present = handle.schema_arrow
        wanted = None if columns is None else [c for c in columns if c in present.names]
        names = present.names if wanted is None else wanted
        text = [n for n in names if _is_text(present.field(n).type)]
        if text:  # text stays dictionary-encoded until its decoded size is known
            handle = pq.ParquetFile(io.BytesIO(data), read_dictionary=text)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise EvalkitError(f"{shown}: not a parquet file ({exc})") from None
    declared = handle.metadata.num_rows
    if declared > max_rows:
        raise EvalkitError(
            f"{shown}: holds {declared} rows, more than the {max_rows} a table may have; "
            "nothing was decoded"
        )
    pages = _uncompressed_bytes(handle.metadata, set(names))
    if pages > max_bytes:
        raise EvalkitError(
            f"{shown}: its columns hold {pages} bytes uncompressed, more than the {max_bytes} "
            "a table may take; nothing was decoded"
        )
    batches, rows, size = [], 0, 0
    try:
        for batch in handle.iter_batches(batch_size=_BATCH_ROWS, columns=wanted):
            rows += batch.num_rows
            size += sum(_decoded_bytes(column, pc) for column in batch.columns)
            if rows > max_rows or size > max_bytes:
                over = (
                    f"more than {max_rows} rows" if rows > max_rows
                    else f"more than {max_bytes} bytes decoded"
                )  # fmt: skip
                raise EvalkitError(
                    f"{shown}: {over} (its footer declared {declared} rows); refused at row "
                    f"{rows} before decoding the rest"
                )
            batches.append(batch)
        schema = pa.schema([handle.schema_arrow.field(n) for n in names])
        table = pa.Table.from_batches(batches, schema=schema)
        for name in text:  # within the cap now: the plain values, as pandas expects them
            i = table.schema.get_field_index(name)
            table = table.set_column(i, name, table.column(name).cast(present.field(name).type))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise EvalkitError(f"{shown}: cannot be decoded ({exc})") from None
    return table.to_pandas()


def _is_text(kind: Any) -> bool:
    import pyarrow.types as t

    return bool(
        t.is_string(kind) or t.is_large_string(kind) or t.is_binary(kind) or t.is_large_binary(kind)
    )


def _uncompressed_bytes(metadata: Any, names: set[str]) -> int:
    """What the footer says the named columns' pages take uncompressed, over every row group."""
    total = 0
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            if chunk.path_in_schema.split(".")[0] in names:
                total += chunk.total_uncompressed_size
    return total


def _decoded_bytes(column: Any, pc: Any) -> int:
    """The bytes ``column`` takes decoded: a dictionary column counted as its values expanded."""
    if not hasattr(column, "dictionary"):
        return int(column.nbytes)
    lengths = pc.binary_length(column.dictionary).take(column.indices)
    return int(pc.sum(lengths).as_py() or 0) + 8 * len(column) + int(column.indices.nbytes)
