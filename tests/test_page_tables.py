"""How a table reads on a study page (evalkit.analyses.page_tables), and the calibration and
landing layouts built on it: no NaN/None/raw float, escaped cells, long tables folded."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from evalkit.analyses import calibration, page_tables
from evalkit.analyses.page_tables import FOLD_AFTER, MISSING, SUMMARY, cell_text, frame_html


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, MISSING),
        (float("nan"), MISSING),
        (np.float64("nan"), MISSING),
        (pd.NA, MISSING),
        (math.inf, "∞"),
        (-math.inf, "−∞"),
        (0.8249137, "0.825"),
        (np.float32(0.5), "0.5"),
        (3.0, "3"),  # a count that passed through a float column
        (7, 7),
        (True, True),
        ("tie (2 of 5 each)", "tie (2 of 5 each)"),
    ],
)
def test_a_cell_reads_as_text(value: object, shown: object) -> None:
    assert cell_text(value) == shown


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


def test_a_table_has_no_nan_none_or_raw_float_and_escapes_its_cells() -> None:
    df = pd.DataFrame(
        {"judge": ["pass", None, "<script>alert(1)</script>"], "kappa": [0.8249137, np.nan, 1.0]}
    )
    html = frame_html(df)
    assert "<script>" not in html and "&lt;script&gt;" in html
    text = _text(html)
    assert not re.search(r"\b(NaN|nan|None)\b", text), text
    assert "0.825" in text and "0.8249137" not in text and MISSING in text
    assert '<div class="evalkit-table">' in html and "<details" not in html  # short: not folded


def test_a_long_table_is_folded_under_its_summary_row() -> None:
    df = pd.DataFrame({"n": range(FOLD_AFTER + 1)})
    html = frame_html(df)
    assert html.startswith('<details class="evalkit-fold"><summary>The table')
    assert f"({FOLD_AFTER + 1} rows × 1 column; show)" in html
    df.attrs[SUMMARY] = "16 checks: 2 <broken>"  # the frame's own summary, escaped
    assert "<summary>16 checks: 2 &lt;broken&gt; " in frame_html(df)
    assert frame_html(df.iloc[:0]) == f'<p class="evalkit-empty">{page_tables.EMPTY}</p>'
    short = pd.DataFrame({"n": range(FOLD_AFTER)})
    assert "<details" not in frame_html(short)


def test_an_explanation_repeated_down_a_column_is_said_once() -> None:
    why = "v1 reads only the active events.jsonl; this window's gate events were rotated"
    df = pd.DataFrame({"session": list("abcd"), "why": [why] * 4, "rate": ["0/1 = 0.0%"] * 4})
    html = frame_html(df)
    assert html.count("events.jsonl") == 1 and html.count(">note 1<") == 4
    assert f"<li>note 1: {why.replace(chr(39), '&#x27;')}</li>" in html
    assert html.count("0/1 = 0.0%") == 4  # a figure is not an explanation: it stays in its cell
    assert "note" not in frame_html(df.head(3))  # three times in a column still reads inline
    calls = pd.DataFrame({"repeats": ["cannot-determine, pass, pass, pass, pass"] * 5})
    assert "note" not in frame_html(calls)  # a list of labels is data, not an explanation


def test_a_tie_reads_as_one_and_the_disagreements_fold() -> None:
    dis = pd.DataFrame(
        [
            ("ia-1", "pass", None, "pass, fail, pass, fail, (error)", "2/4", 6, "r"),
            ("ia-2", "fail", "pass", "pass, pass, fail", "1/3", 3, "r"),
            ("ia-3", "fail", None, "(error), (cannot-parse)", "0/0", 3, "r"),
        ],
        columns=["item_id", "gold", "judge", "repeats", "agreeing", "gold_rule", "rationale"],
    )

    class Result:
        disagreements = dis

    shown = calibration.disagreements(Result())
    assert list(shown.frame["judge"]) == ["tie (2 of 5 each)", "pass", "no label"]
    assert shown.summary.startswith("3 item(s) where a repeat differs from gold (gold / majority")
    assert "pass / tie (2 of 5 each): 1" in shown.summary
    assert "<details" in shown._repr_html_()  # folded under that summary, even when short


def test_the_decision_says_its_verdict_once() -> None:
    assert calibration._why("does not graduate: n = 3 < 40") == "n = 3 < 40"
    assert calibration._why("graduates: kappa CI lower bound 0.7 >= 0.6").startswith("kappa")
    assert calibration._why("something else") == "something else"


def test_register_makes_it_the_html_of_every_frame() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    page_tables.register(shell)
    data, _ = shell.display_formatter.format(pd.DataFrame({"x": [None, 0.123456]}))
    assert 'class="evalkit-table"' in data["text/html"] and "0.123" in data["text/html"]
    assert "None" not in _text(data["text/html"])
