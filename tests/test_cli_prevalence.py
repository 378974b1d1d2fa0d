"""``evalkit stats prevalence`` and ``evalkit stats plan-prevalence`` from the outside: the JSON is
the library's, the exit codes are SPEC section 3's, bad input names the file and the line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from repo_layout import SET, make_repo

from evalkit.analyses import prevalence as prev
from evalkit.cli.main import main
from evalkit.files.labels import read_item_labels
from evalkit.simulate import SimulatedModelJudge, simulate_target
from evalkit.stats import plan_prevalence
from tests.conftest import REPO_ROOT

GOLD = REPO_ROOT / "gold" / SET / "v2"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    rc = main(["stats", *args])
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 and out.strip() else out), err


# --------------------------------------------------------------------------- plan-prevalence

SHARES = "pass=0.5,fail=0.2,cannot-determine=0.3"
PREVALENCE = {"pass": 0.5, "fail": 0.2, "cannot-determine": 0.3}


def test_plan_prevalence_is_the_library_plan(capsys: pytest.CaptureFixture[str]) -> None:
    conf = {c: {d: 0.86 if c == d else 0.07 for d in PREVALENCE} for c in PREVALENCE}
    rc, got, err = _run(capsys, "plan-prevalence", "--prevalence", SHARES, "--confusion",
                        json.dumps(conf), "--half-width", "0.04", "--n-target", "3000")  # fmt: skip
    assert rc == 0
    want = plan_prevalence(PREVALENCE, conf, 0.04, n_target=3000).to_dict()
    assert got == {**want, "confusion": conf}
    assert f"corrected: {want['n_gold']} gold items" in err
    assert f"PPI++: {want['n_human']} human-labelled target items" in err


def test_plan_prevalence_accuracy_and_file_and_simulation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    rc, by_accuracy, _ = _run(capsys, "plan-prevalence", "--prevalence", SHARES, "--accuracy",
                              "0.9", "--half-width", "0.05", "--n-target", "2000", "--compact")  # fmt: skip
    assert rc == 0
    conf = by_accuracy["confusion"]
    assert conf["fail"] == pytest.approx({"pass": 0.05, "fail": 0.9, "cannot-determine": 0.05})
    path = tmp_path / "conf.json"
    path.write_text(json.dumps(conf), encoding="utf-8")
    rc, by_file, _ = _run(capsys, "plan-prevalence", "--prevalence", json.dumps(PREVALENCE),
                          "--confusion-file", str(path), "--half-width", "0.05", "--n-target",
                          "2000")  # fmt: skip
    assert rc == 0 and by_file == by_accuracy
    rc, sim, _ = _run(capsys, "plan-prevalence", "--prevalence", SHARES, "--accuracy", "0.9",
                      "--half-width", "0.05", "--n-target", "2000", "--method", "simulation",
                      "--n-simulations", "60", "--seed", "3")  # fmt: skip
    assert rc == 0 and sim["method"] == "simulation" and sim["seed"] == 3
    want = plan_prevalence(PREVALENCE, conf, 0.05, n_target=2000, method="simulation",
                           n_simulations=60, rng=3).to_dict()  # fmt: skip
    assert {k: sim[k] for k in want} == want


def test_plan_prevalence_help_explains_every_input(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["stats", "plan-prevalence", "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for needle in ("--prevalence SHARES", "true share you expect", "--accuracy A",
                   "--confusion JSON", "--half-width H", "0.05 = +-5 percentage points",
                   "--n-target N", "--gold-shares", "delta method", "simulation"):  # fmt: skip
        assert needle in text, needle


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--prevalence", "pass=x", "--accuracy", "0.9"], "expected class=share pairs"),
        (["--prevalence", "pass=0.5,fail=0.2", "--accuracy", "0.9"], "summing to 1"),
        (["--prevalence", SHARES, "--accuracy", "1.5"], "--accuracy must be in"),
        (["--prevalence", SHARES, "--confusion", "{not json"], "--confusion: not JSON"),
        (["--prevalence", SHARES, "--confusion", '{"pass": {"pass": 1}}'], "confusion must map"),
        (["--prevalence", SHARES], "one of the arguments --accuracy --confusion"),
    ],
)
def test_plan_prevalence_bad_input_exits_1(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    try:
        rc = main(["stats", "plan-prevalence", *args, "--half-width", "0.05", "--n-target", "500"])
    except SystemExit as exc:  # argparse's own errors exit 1 (cli.main._Parser)
        rc = exc.code
    assert rc == 1
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- prevalence


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A judge's calls on the gold set and on a target (3 repeats), humans on 60 target items."""
    from evalkit.gold.sets import load

    tmp = tmp_path_factory.mktemp("prev-cli")
    gold = load(GOLD)
    judge = SimulatedModelJudge()
    judge.label(list(gold.items["label"]), list(gold.items["item_id"]), repeats=3,
                rng=1).to_csv(tmp / "gold.csv", index=False)  # fmt: skip
    target = simulate_target(400, PREVALENCE, rng=2)
    judge.label(list(target["truth"]), list(target["item_id"]), repeats=3,
                rng=3).to_csv(tmp / "target.csv", index=False)  # fmt: skip
    humans = target.sample(60, random_state=4).rename(columns={"truth": "label"})
    humans.to_csv(tmp / "human.csv", index=False)
    return {"gold": tmp / "gold.csv", "target": tmp / "target.csv", "human": tmp / "human.csv"}


def _library(files: dict[str, Path], human: bool, **kw: Any) -> dict[str, Any]:
    from evalkit.gold.sets import load

    gold = load(GOLD)
    data = prev.PrevalenceData(
        target=read_item_labels(files["target"], "target labels file"),
        gold_judge=read_item_labels(files["gold"], "gold labels file"),
        gold_tag=gold.tag, gold_sha256=gold.sha256, gold_ids=tuple(gold.items["item_id"]),
        gold_labels=tuple(gold.items["label"]),
        human=read_item_labels(files["human"], "human labels file") if human else None,
    )  # fmt: skip
    return prev.figures(prev.estimate(data, **kw), data)


def test_prevalence_is_the_library_estimate(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path]
) -> None:
    rc, got, err = _run(capsys, "prevalence", "--target", str(files["target"]), "--gold-labels",
                        str(files["gold"]), "--gold", str(GOLD), "--human", str(files["human"]),
                        "--n-resamples", "300", "--seed", "5")  # fmt: skip
    assert rc == 0
    want = _library(files, True, n_resamples=300, seed=5)
    assert got == {"seed": 5, "n_resamples": 300, **want}
    assert got["ppi"]["n"] == 60 and got["corrected"]["n"] == 400
    assert got["target"]["ties"] > 0 and got["target"]["majority_rule"]
    # the readable table on stderr: one line per class, every estimator with its n
    assert "corrected (n = 400 target + 199 gold)" in err and "PPI++ (n = 60 human" in err
    for c in PREVALENCE:
        assert any(line.startswith(c) for line in err.splitlines()), c
    assert "assumption (corrected): The judge's error rates measured on the gold set" in err


def test_prevalence_without_humans_and_with_the_default_gold_folder(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO_ROOT)  # --gold defaults to gold/instruction-adherence (newest: v2)
    rc, got, err = _run(capsys, "prevalence", "--target", str(files["target"]), "--gold-labels",
                        str(files["gold"]), "--n-resamples", "200", "--compact")  # fmt: skip
    assert rc == 0 and got["ppi"] is None and got["gold"]["tag"] == "instruction-adherence-v2"
    assert got == {"seed": 0, "n_resamples": 200, **_library(files, False, n_resamples=200)}
    assert "PPI++" not in err


def _bad(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def test_prevalence_bad_input_exits_1_naming_file_and_line(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    base = ["prevalence", "--gold-labels", str(files["gold"]), "--gold", str(GOLD)]
    bad = _bad(tmp_path, "t.csv", "item_id,label\na,pass\na,fail\n")
    rc, _, err = _run(capsys, *base, "--target", str(bad))
    assert rc == 1 and f"target labels file {str(bad)!r}: line 3: field 'item_id'" in err
    stranger = _bad(tmp_path, "h.csv", "item_id,label\nnobody,pass\n")
    rc, _, err = _run(capsys, *base, "--target", str(files["target"]), "--human", str(stranger))
    assert rc == 1 and "item 'nobody' is not an item of the target" in err
    rc, _, err = _run(capsys, *base, "--target", str(tmp_path / "missing.csv"))
    assert rc == 1 and "missing.csv" in err
    rc, _, err = _run(capsys, "prevalence", "--target", str(files["target"]), "--gold-labels",
                      str(files["target"]), "--gold", str(GOLD))  # fmt: skip
    assert rc == 1 and "is not in the gold set instruction-adherence-v2" in err
    rc, _, err = _run(capsys, *base, "--target", str(files["target"]), "--level", "1.5")
    assert rc == 1 and "level must be" in err
    assert "Traceback" not in err


def test_prevalence_from_a_calibration_certificate(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path
) -> None:
    """The rule judge's registered calibration (in a repository copy): its labels on gold are
    read from the certificate after it re-checks; a tampered certificate is refused, exit 1."""
    from evalkit.calibration import calibrate, register, rule_judge_labels
    from evalkit.gold.sets import load

    repo = make_repo(tmp_path / "repo")
    gold = load(repo / "gold" / SET / "v2")
    labels = rule_judge_labels(gold)
    cert = register(calibrate(labels, gold, judge="rules", n_resamples=200, root=repo))
    path = repo / "calibrations" / f"{cert.calibration_ref}.json"
    target = _bad(tmp_path, "target.csv", "item_id,label\n" + "".join(
        f"t{i},{lab}\n" for i, lab in enumerate(["pass"] * 50 + ["fail"] * 30 + ["cannot-determine"] * 20)
    ))  # fmt: skip
    rc, got, _ = _run(capsys, "prevalence", "--target", str(target), "--calibration", str(path),
                      "--root", str(repo), "--n-resamples", "200")  # fmt: skip
    assert rc == 0, got
    pair = (list(labels["label"]), list(gold.items["label"]))
    from evalkit.stats import corrected_prevalence

    direct = corrected_prevalence(read_item_labels(target).labels, pair, n_resamples=200, rng=0)
    assert got["corrected"] == direct.to_dict()
    assert got["gold"]["judge"]["judge"] == "rules" and got["gold"]["judge"]["items"] == 199
    tampered = tmp_path / "tampered.json"
    shutil.copy(path, tampered)
    obj = json.loads(tampered.read_text(encoding="utf-8"))
    obj["labels"]["items"][0]["label"] = (
        "fail" if obj["labels"]["items"][0]["label"] != "fail" else "pass"
    )
    tampered.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n", encoding="ascii")
    rc, _, err = _run(capsys, "prevalence", "--target", str(target), "--calibration",
                      str(tampered), "--root", str(repo))  # fmt: skip
    assert rc == 1 and "refused" in err
    rc, _, err = _run(capsys, "prevalence", "--target", str(target), "--calibration", str(path),
                      "--root", str(repo), "--gold", str(GOLD))  # fmt: skip
    assert rc == 1 and "--gold goes with --gold-labels" in err


def test_prevalence_help_states_the_layouts_and_the_majority_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["stats", "prevalence", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needle in ("item_id,judge,repeat,label,outcome", "strictly more", "A tie for the most "
                   "calls", "never broken", "'(no label)'", "hold on the target",
                   "simple random sample", "exit status"):  # fmt: skip
        assert needle in text, needle
