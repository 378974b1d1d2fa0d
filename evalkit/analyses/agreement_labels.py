"""The agreement study's input: a long label table, and one target's items x raters matrix.

Input columns: ``item_id, target, family, rater, label`` (any other column is ignored; in
particular the simulator's ``truth`` is never read).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.errors import EvalkitError
from evalkit.extras import require

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REQUIRED_COLUMNS", "full_counts", "load_labels", "wide"]

REQUIRED_COLUMNS: tuple[str, ...] = ("item_id", "target", "family", "rater", "label")

_LABEL_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")


def load_labels(labels_path: str = "", *, n_items: int = 40, seed: int = 0) -> pd.DataFrame:
    """Read a long label table (CSV, JSONL or parquet), or simulate one when the path is "".

    The file is read through :mod:`evalkit.files.input` (a regular file only, bounded; CSV and
    JSONL as strict UTF-8 naming the line of a bad byte); anything pandas cannot parse is an
    ``EvalkitError`` naming the file, never a traceback.
    """
    if not labels_path:
        from evalkit.simulate import simulate_labels

        return simulate_labels(n_items, seed=seed)
    path = Path(labels_path)
    if path.suffix not in _LABEL_SUFFIXES:
        raise EvalkitError(f"{path}: unsupported label file type; use .csv, .jsonl or .parquet")
    df = _parse_labels(path)
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise EvalkitError(f"{path}: missing column(s) {missing}; need {list(REQUIRED_COLUMNS)}")
    return df


def _parse_labels(path: Path) -> pd.DataFrame:
    import io

    import pandas as pd

    from evalkit.files.input import clip, read_text
    from evalkit.files.parquet import read_parquet

    what = "labels file"
    try:
        if path.suffix == ".parquet":
            require("pyarrow", purpose="a .parquet label file")
            # bounded in rows and memory before a value is decoded (evalkit.files.parquet)
            return read_parquet(path, what, columns=REQUIRED_COLUMNS)
        # every line under the line cap, so no single row can cost more than the cap says
        text = read_text(path, what, line_cap=True)
        if path.suffix == ".csv":
            # only the columns read here: a row of thousands of columns stays cheap
            return pd.read_csv(io.StringIO(text), dtype=str, usecols=_wanted_column)
        return pd.read_json(io.StringIO(text), lines=True, dtype=False)
    except EvalkitError:
        raise
    except Exception as exc:  # pandas/pyarrow raise many types on hostile bytes: say which
        raise EvalkitError(
            f"{what} {str(path)!r}: cannot be read as {path.suffix.lstrip('.')}: "
            f"{type(exc).__name__}: {clip(str(exc))}"
        ) from None


def _wanted_column(name: str) -> bool:
    return name in REQUIRED_COLUMNS


def wide(labels: pd.DataFrame, target: str) -> pd.DataFrame:
    """Items x raters matrix of one target (missing labels as None)."""
    sub = labels[labels["target"] == target]
    table = sub.pivot_table(index="item_id", columns="rater", values="label", aggfunc="first")
    return table.astype(object).where(table.notna(), None)


def full_counts(matrix: list[list[Any]], categories: list[Any]) -> Any:
    """Items x categories counts over the items every rater labelled."""
    import numpy as np

    full = [row for row in matrix if all(v is not None for v in row)]
    return full, np.array([[sum(v == c for v in row) for c in categories] for row in full], float)
