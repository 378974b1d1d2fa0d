"""Issue 24, finding 15: a small parquet file must not cost gigabytes before it is refused.

A 932 KB labels file with 60M dictionary rows took 7 GB and two minutes before the agreement
study failed. Parquet input is now bounded in rows (refused from the footer, before a value is
decoded) and in decoded bytes (counted batch by batch), and only the needed columns are
decoded (:func:`evalkit.files.parquet.read_parquet`). The hostile file is read in a child under
an address-space limit (``tests/hostile.py``), so the old behaviour cannot take the machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile import in_child

pa = pytest.importorskip("pyarrow")  # the parquet extra; the Makefile installs it
pq = pytest.importorskip("pyarrow.parquet")

COLUMNS = ("item_id", "target", "family", "rater", "label")


def _dictionary_file(path: Path, rows: int, *, extra: int = 0) -> Path:
    """``rows`` rows of one repeated value per column, dictionary-encoded: a tiny file."""
    index = pa.array([0] * rows, type=pa.int32())
    columns = {c: pa.DictionaryArray.from_arrays(index, pa.array([f"{c}-0"])) for c in COLUMNS}
    columns.update({f"extra{i}": columns["label"] for i in range(extra)})
    pq.write_table(pa.table(columns), path, compression="zstd")
    return path


def _load(path: str) -> int:
    from evalkit.analyses.agreement_labels import load_labels

    return len(load_labels(path))


def test_a_tiny_file_of_millions_of_rows_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    path = _dictionary_file(tmp_path / "labels.parquet", 3_000_000)
    assert path.stat().st_size < 200_000  # small on disk, 3 million rows inside
    outcome = in_child(_load, str(path), timeout=60)
    assert outcome.kind == "raised" and outcome.evalkit_error, outcome
    assert "holds 3000000 rows, more than the 2000000 a table may have" in outcome.message
    assert "nothing was decoded" in outcome.message


@pytest.mark.slow
def test_decoded_bytes_are_bounded_and_only_the_needed_columns_read(tmp_path: Path) -> None:
    from evalkit.errors import EvalkitError
    from evalkit.files.parquet import read_parquet

    rows = 200_000
    table = pa.table(
        {c: pa.array([f"{c}-{i:090d}" for i in range(rows)]) for c in COLUMNS}  # ~100 B cells
    )
    path = tmp_path / "wide.parquet"
    pq.write_table(table, path)
    # its pages alone are over the cap: refused from the footer, before a value is decoded
    with pytest.raises(EvalkitError, match=r"hold \d+ bytes uncompressed, more than the 1048576"):
        read_parquet(path, "labels file", max_bytes=1 << 20)
    few = _dictionary_file(tmp_path / "few.parquet", 10, extra=3)
    frame = read_parquet(few, "labels file", columns=["item_id", "label", "absent"])
    assert list(frame.columns) == ["item_id", "label"] and len(frame) == 10
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(EvalkitError, match=r"bad\.parquet.*not a parquet file"):
        read_parquet(tmp_path / "bad.parquet", "labels file")


def _long_value_file(path: Path, rows: int, value_bytes: int) -> Path:
    """``rows`` rows (well under the row cap) all naming one ``value_bytes``-long value of a
    dictionary: a small file whose decoded label column is ``rows * value_bytes`` bytes."""
    index = pa.array([0] * rows, type=pa.int32())
    long = pa.DictionaryArray.from_arrays(index, pa.array(["x" * value_bytes]))
    short = {c: pa.DictionaryArray.from_arrays(index, pa.array([f"{c}-0"])) for c in COLUMNS}
    # no Arrow schema stored: a reader sees plain text columns (as most writers leave them),
    # dictionary-encoded on disk, which pyarrow expands batch by batch
    table = pa.table({**short, "label": long})
    pq.write_table(table, path, compression="zstd", store_schema=False)
    return path


def test_one_long_value_on_every_row_is_refused_before_it_is_expanded(tmp_path: Path) -> None:
    """Another member of finding 15's class: 100,000 rows (a twentieth of the row cap) that
    all name one 64 KB value decode to 6.5 GB; the first batch alone was 4 GB. Counted by the
    dictionary's value lengths, it is refused before a copy is made, under a memory limit."""
    path = _long_value_file(tmp_path / "labels.parquet", 100_000, 64 << 10)
    assert path.stat().st_size < 1_000_000
    outcome = in_child(_load, str(path), timeout=60)
    assert outcome.kind == "raised" and outcome.evalkit_error, outcome
    assert "bytes decoded" in outcome.message and "refused at row 65536" in outcome.message
    # plain text columns (parquet dictionary-encodes them on disk) are counted the same way,
    # and an honest file reads with its values as plain strings, as before
    from evalkit.errors import EvalkitError
    from evalkit.files.parquet import read_parquet

    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({c: pa.array(["x" * 1000] * 5000) for c in COLUMNS}), plain)
    with pytest.raises(EvalkitError, match=r"more than 1048576 bytes decoded .* refused at row "):
        read_parquet(plain, "labels file", max_bytes=1 << 20)
    frame = read_parquet(plain, "labels file", columns=["item_id", "label"])
    assert frame["label"].tolist() == ["x" * 1000] * 5000 and list(frame.columns) == [
        "item_id", "label"
    ]  # fmt: skip
    assert str(frame["label"].dtype) != "category"  # plain text, as pandas reads it
