"""Label files: one label per item, by the stated majority rule; bad files named by file and line."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from evalkit.errors import EvalkitError
from evalkit.files.labels import (
    MAJORITY_RULE,
    long_labels,
    majority_label,
    read_item_labels,
)
from evalkit.simulate import SimulatedModelJudge
from tests.test_calibration import alarm  # noqa: F401 - the fixture: a blocked read fails in 30 s


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


LONG = "item_id,judge,repeat,label,outcome\n"


def test_one_row_per_item(tmp_path: Path) -> None:
    path = _write(tmp_path / "l.csv", "item_id,label,note\na,pass,x\nb,,y\n\nc,fail,z\n")
    got = read_item_labels(path)
    assert got.layout == "item_id,label"
    assert got.item_ids == ("a", "b", "c") and got.labels == ("pass", None, "fail")
    assert got.unlabelled == ("b",) and got.ties == () and got.n_labelled == 2
    assert got.source == str(path)


def test_the_majority_rule_by_hand(tmp_path: Path) -> None:
    rows = [
        # a: 2 pass, 1 fail -> pass
        ("a", 0, "pass", "ok"), ("a", 1, "fail", "ok"), ("a", 2, "pass", "ok"),
        # b: 1 pass, 1 fail, 1 unparsed -> tie -> no label
        ("b", 0, "pass", "ok"), ("b", 1, "fail", "ok"), ("b", 2, "", "cannot-parse"),
        # c: every call failed -> no label
        ("c", 0, "", "error"), ("c", 1, "", "cannot-parse"),
        # d: 1 pass, 2 unparsed -> pass (one readable call is a strict majority)
        ("d", 0, "", "cannot-parse"), ("d", 1, "pass", "ok"), ("d", 2, "", "error"),
        # e: 2 pass, 2 fail, 1 cd -> tie at the top -> no label
        ("e", 0, "pass", "ok"), ("e", 1, "fail", "ok"), ("e", 2, "pass", "ok"),
        ("e", 3, "fail", "ok"), ("e", 4, "cannot-determine", "ok"),
    ]  # fmt: skip
    text = LONG + "".join(f"{i},J,{r},{lab},{out}\n" for i, r, lab, out in rows)
    got = read_item_labels(_write(tmp_path / "long.csv", text))
    assert got.layout == "long" and got.judge == "J"
    assert got.by_item() == {"a": "pass", "b": None, "c": None, "d": "pass", "e": None}
    assert got.ties == ("b", "e") and got.unlabelled == ("c",)
    assert got.calls == len(rows) and got.max_repeats == 5
    assert got.outcomes == {"cannot-parse": 3, "error": 2, "ok": 11}
    summary = got.summary()
    assert summary["ties"] == 2 and summary["tied_items"] == ["b", "e"]
    assert summary["majority_rule"] == MAJORITY_RULE


def test_majority_label_never_breaks_a_tie() -> None:
    assert majority_label(["x", "y"]) is None
    assert majority_label(["y", "x"]) is None  # the order does not pick a winner
    assert majority_label(["x", "y", "y"]) == "y"
    assert majority_label([]) is None


def test_a_frame_and_its_csv_give_the_same_labels(tmp_path: Path) -> None:
    calls = SimulatedModelJudge().label(["pass", "fail", "cannot-determine"] * 40, repeats=4, rng=5)
    path = tmp_path / "calls.csv"
    calls.to_csv(path, index=False)
    from_file = read_item_labels(path)
    from_frame = long_labels(calls, "frame")
    assert from_file.by_item() == from_frame.by_item()
    assert from_file.ties == from_frame.ties and from_file.outcomes == from_frame.outcomes
    assert from_frame.ties  # 4 calls per item: ties do occur, and are no label


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_judge_s_columns_give_the_labels_its_frame_gives(seed: int) -> None:
    """label_columns (lists, no table) and label (a DataFrame): the same draws, read the same."""
    judge, truth = SimulatedModelJudge(), ["pass", "fail", "cannot-determine"] * 300
    columns = judge.label_columns(truth, repeats=5, rng=seed)
    frame = judge.label(truth, repeats=5, rng=seed)

    def cells(values: list[object]) -> list[object]:  # the frame holds NaN where a list has None
        return [None if isinstance(v, float) and v != v else v for v in values]

    assert {c: list(v) for c, v in columns.items()} == {c: cells(frame[c].tolist()) for c in frame}
    assert long_labels(columns, "calls") == long_labels(frame, "calls")
    with pytest.raises(EvalkitError, match=r"calls: column\(s\) outcome missing"):
        long_labels({c: v for c, v in columns.items() if c != "outcome"}, "calls")


def test_several_judges_need_a_choice(tmp_path: Path) -> None:
    path = _write(tmp_path / "two.csv", LONG + "a,J1,0,pass,ok\na,J2,0,fail,ok\n")
    with pytest.raises(EvalkitError, match=r"2 judges \('J1', 'J2'\); name the one to read"):
        read_item_labels(path)
    assert read_item_labels(path, judge="J2").by_item() == {"a": "fail"}
    with pytest.raises(EvalkitError, match="no judge 'J3'"):
        read_item_labels(path, judge="J3")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("item_id,label\n", "no item"),
        ("item,label\na,pass\n", r"line 1: missing column\(s\) item_id"),
        ("item_id,label\na,pass\n,fail\n", "line 3: field 'item_id' is empty"),
        ("item_id,label\na,pass\nb,x\na,fail\n", "line 4: field 'item_id': item 'a' already "
         "given on line 2"),
        ("item_id,label\na,pass,extra\n", "line 2: 3 fields, the header has 2"),
        ('item_id,label\na,"pass\n', "not a readable CSV"),
        (LONG + "a,J,x,pass,ok\n", "line 2: field 'repeat': 'x' is not a whole number"),
        (LONG + "a,J,-1,pass,ok\n", "line 2: field 'repeat': '-1'"),
        (LONG + "a,J,0,pass,ok\na,J,0,fail,ok\n", "line 3: field 'repeat': judge 'J' item 'a' "
         "repeat 0 already given on line 2"),
        (LONG + "a,J,0,,ok\n", "line 2: field 'label': an ok call without a label"),
        (LONG + "a,J,0,pass,error\n", "line 2: field 'label': outcome 'error' gives no label"),
        (LONG + "a,,0,pass,ok\n", "line 2: field 'judge' is empty"),
        (LONG + "a,J,0,pass,\n", "line 2: field 'outcome' is empty"),
        ("item_id,judge,repeat,label\na,J,0,pass\n", r"missing column\(s\) outcome"),
    ],
)  # fmt: skip
def test_bad_files_are_named_with_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path / "bad.csv", text)
    with pytest.raises(EvalkitError, match=message) as err:
        read_item_labels(path, "target labels file")
    assert f"target labels file {str(path)!r}" in str(err.value)


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(b"item_id,label\na,pass\nb,\xff\n")
    with pytest.raises(EvalkitError, match="line 3: invalid UTF-8"):
        read_item_labels(path)


def test_a_judge_name_for_a_one_row_per_item_file_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "l.csv", "item_id,label\na,pass\n")
    with pytest.raises(EvalkitError, match="no judge column"):
        read_item_labels(path, judge="J")


@pytest.mark.usefixtures("alarm")
def test_a_fifo_a_folder_or_a_missing_file_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(EvalkitError, match="named pipe"):
        read_item_labels(fifo)
    with pytest.raises(EvalkitError, match="directory"):
        read_item_labels(tmp_path)
    with pytest.raises(EvalkitError, match=r"missing\.csv"):
        read_item_labels(tmp_path / "missing.csv")


def test_long_labels_checks_a_frame_too() -> None:
    frame = pd.DataFrame(
        {"item_id": ["a", "a"], "judge": ["J", "J"], "repeat": [0, 0], "label": ["pass", "fail"],
         "outcome": ["ok", "ok"]}
    )  # fmt: skip
    with pytest.raises(EvalkitError, match="frame: line 2: field 'repeat'"):
        long_labels(frame, "frame")
    with pytest.raises(EvalkitError, match=r"column\(s\) outcome missing"):
        long_labels(frame.drop(columns="outcome"), "frame")
