"""Tests of ``evalkit stats`` (kappa, sample-size, thresholds)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalkit.cli.main import main
from evalkit.stats import cohen_kappa, fleiss_kappa


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict | None, str]:
    rc = main(["stats", *argv])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 else None), err


def _write_long(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    path.write_text(
        "item_id,rater,label\n" + "".join(f"{i},{r},{lab}\n" for i, r, lab in rows),
        encoding="utf-8",
    )
    return path


# SAS PROC FREQ agreement example table [[0,4,1],[0,8,0],[0,1,5]]: kappa 0.4842, ASE 0.1380,
# 95% CI (0.2137, 0.7547) -- written out as one rating per row.
SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]


def _sas_rows() -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    item = 0
    for i, row in enumerate(SAS_TABLE):
        for j, count in enumerate(row):
            for _ in range(count):
                item += 1
                rows += [(f"i{item}", "a", f"c{i}"), (f"i{item}", "b", f"c{j}")]
    return rows


def test_kappa_cohen_reproduces_sas_example(tmp_path: Path, capsys) -> None:
    path = _write_long(tmp_path / "labels.csv", _sas_rows())
    rc, out, _ = _run(capsys, "kappa", "--labels", str(path), "--method", "analytic")
    assert rc == 0 and out is not None
    assert out["statistic"] == "Cohen's kappa"
    assert round(out["value"], 4) == 0.4842
    assert round(out["standard_error"], 4) == 0.1380
    assert round(out["confidence_interval"]["low"], 4) == 0.2137
    assert round(out["confidence_interval"]["high"], 4) == 0.7547
    assert out["n_items"] == 19 and out["raters"] == ["a", "b"]


def test_kappa_bootstrap_is_seeded(tmp_path: Path, capsys) -> None:
    path = _write_long(tmp_path / "labels.csv", _sas_rows())
    args = ("kappa", "--labels", str(path), "--n-resamples", "500", "--seed", "3")
    _, first, _ = _run(capsys, *args)
    _, second, _ = _run(capsys, *args)
    assert first == second
    assert first is not None and first["confidence_interval"]["method"] == "bca"
    assert (
        first["confidence_interval"]["low"] < first["value"] < first["confidence_interval"]["high"]
    )


def test_kappa_fleiss_for_three_raters_and_pair_selection(tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, size=(30, 3))
    labels[:, 1] = np.where(rng.random(30) < 0.6, labels[:, 0], labels[:, 1])
    rows = [(f"u{i}", f"r{g}", str(labels[i, g])) for i in range(30) for g in range(3)]
    path = _write_long(tmp_path / "three.csv", rows)
    rc, out, _ = _run(capsys, "kappa", "--labels", str(path), "--method", "analytic")
    assert rc == 0 and out is not None
    expected = fleiss_kappa([[str(x) for x in row] for row in labels])
    assert out["statistic"] == expected.name
    assert out["value"] == pytest.approx(expected.statistic)
    rc, out, _ = _run(
        capsys, "kappa", "--labels", str(path), "--rater-a", "r0", "--rater-b", "r1",
        "--method", "analytic",
    )  # fmt: skip
    assert rc == 0 and out is not None
    pair = cohen_kappa([[str(a), str(b)] for a, b in labels[:, :2]])
    assert out["value"] == pytest.approx(pair.statistic)
    assert out["raters"] == ["r0", "r1"]


def test_kappa_errors_name_file_line_and_field(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,rater,label\n1,a,x\n,b,y\n", encoding="utf-8")
    rc, _, err = _run(capsys, "kappa", "--labels", str(bad))
    assert rc == 1 and "bad.csv: line 3: field 'item_id' is empty" in err
    twice = _write_long(tmp_path / "twice.csv", [("1", "a", "x"), ("1", "a", "y")])
    rc, _, err = _run(capsys, "kappa", "--labels", str(twice))
    assert rc == 1 and "line 3" in err and "twice" in err
    nocol = tmp_path / "nocol.csv"
    nocol.write_text("item_id,who,label\n1,a,x\n", encoding="utf-8")
    rc, _, err = _run(capsys, "kappa", "--labels", str(nocol))
    assert rc == 1 and "missing column(s) rater" in err
    rc, _, err = _run(capsys, "kappa", "--labels", str(tmp_path / "absent.csv"))
    assert rc == 1 and "no such file" in err
    rc, _, err = _run(capsys, "kappa", "--labels", str(bad), "--rater-a", "a")
    assert rc == 1 and "--rater-b" in err


def test_sample_size_test_matches_irr(capsys) -> None:
    # R irr documented example output: N.cohen.kappa(0.5, 0.5, 0.7, 0.85) -> 96.
    rc, out, _ = _run(
        capsys, "sample-size", "test", "--rate1", "0.5", "--rate2", "0.5",
        "--kappa-true", "0.7", "--kappa-null", "0.85", "--compact",
    )  # fmt: skip
    assert rc == 0 and out is not None and out["n"] == 96
    # R irr documented example output: N2.cohen.kappa(c(0.2, 0.25, 0.55), k1=0.6, k0=0.4) -> 101.
    rc, out, _ = _run(
        capsys, "sample-size", "test", "--marginals", "0.2,0.25,0.55",
        "--kappa-true", "0.6", "--kappa-null", "0.4",
    )  # fmt: skip
    assert rc == 0 and out is not None and out["n"] == 101
    rc, _, err = _run(
        capsys,
        "sample-size",
        "test",
        "--rate1",
        "0.5",
        "--kappa-true",
        "0.6",
        "--kappa-null",
        "0.4",
    )
    assert rc == 1 and "--rate2" in err


def test_sample_size_ci(capsys) -> None:
    from evalkit.stats.power import kappa_ci_sample_size

    rc, out, _ = _run(
        capsys, "sample-size", "ci", "--kappa", "0.6", "--prevalence", "0.3", "--width", "0.2"
    )
    assert rc == 0 and out is not None
    assert out["n"] == kappa_ci_sample_size(0.6, 0.3, 0.1) and out["half_width"] == 0.1
    rc, out, _ = _run(
        capsys, "sample-size", "ci", "--kappa", "0.5", "--prevalence", "0.2,0.3,0.5",
        "--half-width", "0.1",
    )  # fmt: skip
    assert rc == 0 and out is not None
    assert out["n"] == kappa_ci_sample_size(0.5, [0.2, 0.3, 0.5], 0.1)
    rc, _, err = _run(
        capsys, "sample-size", "ci", "--kappa", "0.95", "--prevalence", "0.05",
        "--prevalence-b", "0.5", "--half-width", "0.1",
    )  # fmt: skip
    assert rc == 1 and "not attainable" in err


def test_thresholds_cli(tmp_path: Path, capsys) -> None:
    path = tmp_path / "ledger.csv"
    path.write_text(
        "session_id,guard_blocked\ns1,0\ns1,3\ns2,\ns3,5\ns4,1\n",
        encoding="utf-8",
    )
    png = tmp_path / "plot.png"
    rc, out, err = _run(
        capsys, "thresholds", "--csv", str(path), "--count-column", "guard_blocked",
        "--cluster-column", "session_id", "--n-resamples", "200", "--plot", str(png),
    )  # fmt: skip
    assert rc == 0 and out is not None
    assert (out["n_items"], out["n_unknown"], out["n_clusters"]) == (4, 1, 4)
    first = out["thresholds"][0]
    assert first["threshold"] == 1 and first["items_firing"] == 3 and first["clusters_failing"] == 3
    assert first["clusters_undetermined"] == 1  # s2's only record is unknown
    assert png.is_file() and png.stat().st_size > 0 and "wrote" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("session_id,guard_blocked\ns1,2\ns2,-1\n", encoding="utf-8")
    rc, _, err = _run(capsys, "thresholds", "--csv", str(bad), "--count-column", "guard_blocked")
    assert rc == 1 and "bad.csv: line 3: field 'guard_blocked'" in err


def test_help_of_each_subcommand(capsys) -> None:
    for argv in (
        ["stats", "--help"],
        ["stats", "kappa", "--help"],
        ["stats", "sample-size", "ci", "--help"],
        ["stats", "sample-size", "test", "--help"],
        ["stats", "thresholds", "--help"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 0
        assert "usage: evalkit stats" in capsys.readouterr().out
    assert main(["stats"]) == 1
