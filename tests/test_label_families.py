"""Run logs of several judges feed the agreement study: each judge a label family, κ/α/AC1
across judges per target, and each judge's κ vs gold (issue 11, item 4).

The run logs come from ``evalkit judge run`` through the real SDKs against the scripted loopback
server; a second "contrarian" judge says ``fail`` where the rule judge says ``pass`` on every
fifth item, so the judges disagree by a known amount.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa

from evalkit.analyses import label_families as lf
from evalkit.analyses.agreement import per_target
from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.gold.sets import load
from evalkit.judge.consistency import kappa_vs_gold
from evalkit.judge.parse import DIMENSION_STATUSES
from evalkit.judge.scripted_server import Reply, ScriptedServer, rules_reply
from evalkit.studies import run as studies
from tests.judge_helpers import GOLD_V2, KEY_VARS, N_GOLD, lines, run_args


@pytest.fixture(autouse=True)
def _no_caller_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


def _contrarian(request: Any) -> Any:
    reply = rules_reply(request)
    if request.body["model"] == "b" and int(request.item_id.split("-")[1]) % 5 == 0:
        return Reply(reply.text.replace('"pass"', '"fail"'))
    return reply


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with two run logs: judge a (K = 2) and judge b (K = 2), one log each."""
    folder = tmp_path_factory.mktemp("runs")
    with ScriptedServer(_contrarian) as server:
        for model in ("a", "b"):
            out = folder / f"{model}.jsonl"
            args = run_args(
                f"openai:{model}", out, "--repeats", "2", "--quiet", url=server.base_url()
            )
            assert main(args) == 0
    (folder / "notes.jsonl").write_text('{"not": "a run log"}\n', encoding="utf-8")
    return folder


@pytest.mark.slow
def test_a_run_log_a_folder_and_a_glob_name_run_logs(logs: Path, tmp_path: Path) -> None:
    assert lf.runlog_paths(str(logs / "a.jsonl")) == [logs / "a.jsonl"]
    assert lf.runlog_paths(str(logs)) == [logs / "a.jsonl", logs / "b.jsonl"]
    assert lf.runlog_paths(str(logs / "?.jsonl")) == [logs / "a.jsonl", logs / "b.jsonl"]
    assert lf.runlog_paths(str(logs / "notes.jsonl")) is None  # a label table, not a run log
    assert lf.runlog_paths("") is None
    with pytest.raises(EvalkitError, match="names no run log"):
        lf.runlog_paths(str(tmp_path / "*.jsonl"))


@pytest.mark.slow
def test_judges_are_label_families_compared_across_and_with_gold(logs: Path) -> None:
    fam = lf.load(str(logs / "*.jsonl"))
    assert fam is not None and fam.judges == ("openai:a", "openai:b")
    assert set(fam.table["rater"]) == {"openai:a", "openai:b"}  # one rater per judge
    assert len(fam.table) == 2 * N_GOLD and set(fam.table["target"]) == {lf.TARGET}
    fleiss = per_target(fam.table, n_resamples=200)
    row = fleiss[fleiss["coefficient"] == "Fleiss κ"].iloc[0]
    assert row["n_raters"] == 2 and row["n_items"] == N_GOLD and 0.5 < row["estimate"] < 1
    assert fam.gold is not None and fam.gold.sha256 == load(GOLD_V2).sha256
    table = lf.judge_vs_gold(fam, n_resamples=300, seed=1)
    gold = dict(zip(fam.gold.items["item_id"], fam.gold.items["label"], strict=True))
    for r in table.to_dict("records"):
        k = kappa_vs_gold(fam.labels, gold, r["judge"])
        assert r["kappa_all"] == k.statistic and r["n_all"] == 2 * N_GOLD
        low, high = k.confidence_interval(n_resamples=300, rng=1)
        assert (r["kappa_all_ci_low"], r["kappa_all_ci_high"]) == (low, high)
        assert r["items_majority"] == N_GOLD and r["ties"] == 0
    # the second implementation: statsmodels' Cohen kappa on judge b's calls
    table_b = [[0] * 4 for _ in range(4)]
    b = fam.labels[fam.labels["judge"] == "openai:b"]
    for item, label in zip(b["item_id"], b["label"], strict=True):
        table_b[DIMENSION_STATUSES.index(gold[item])][DIMENSION_STATUSES.index(label)] += 1
    kb = table.set_index("judge").loc["openai:b", "kappa_all"]
    assert kb == pytest.approx(sm_cohens_kappa(table_b).kappa, abs=1e-12)
    assert kb < table.set_index("judge").loc["openai:a", "kappa_all"]  # the contrarian agrees less
    shown = lf.judge_vs_gold_frame(table)
    assert "n = 398 calls over 199 items" in shown.loc["openai:a", "κ vs gold, every call [95% CI]"]
    assert "instruction-adherence-v2" in lf.gold_text(fam)


def test_run_logs_not_made_on_a_committed_gold_set_are_compared_with_none(
    logs: Path, tmp_path: Path
) -> None:
    rows = lines(logs / "a.jsonl")
    for row in rows:
        row["source"] = {"kind": "journal", "path": "eval.jsonl", "sha256": None}
    path = tmp_path / "journal-run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    fam = lf.load(str(path))
    assert fam is not None and fam.gold is None and "sources: journal" in fam.gold_reason
    assert lf.judge_vs_gold(fam).empty
    assert "No comparison with gold" in lf.gold_text(fam)
    source = lines(logs / "a.jsonl")[0]["source"]
    for row in rows:
        row["source"] = source
        if row["item_id"] == "ia-007":
            row["item_sha256"] = "f" * 64
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"ia-007.*other content than gold item"):
        lf.load(str(path))


@pytest.mark.notebook
def test_the_agreement_study_reads_run_logs_from_a_glob(logs: Path, tmp_path: Path) -> None:
    run = studies.run_study(
        "agreement-study", {"labels_path": str(logs / "*.jsonl")}, out_dir=tmp_path / "out"
    )
    assert run.ok, run.error
    res = run.results
    assert res["preregistration"]["status"] == "pre-registered"  # data inputs are not design
    assert res["label_families"] == ["openai:a", "openai:b"]
    assert [r["judge"] for r in res["judges_vs_gold"]] == ["openai:a", "openai:b"]
    assert res["n_items"] == N_GOLD
    fleiss = [r for r in res["per_target"] if r["coefficient"] == "Fleiss κ"]
    assert fleiss[0]["n_raters"] == 2
    hashed = res["inputs"]["labels_path"]
    assert hashed["kind"] == "glob" and len(hashed["files"]) == 3 and len(hashed["sha256"]) == 64
    html = run.html.read_text(encoding="utf-8")
    assert "Each judge against gold" in html and "instruction-adherence-v2" in html
