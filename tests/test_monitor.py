"""`evalkit monitor` and evalkit.analyses.monitor: every check's anytime-valid band.

The demo's journal is the preset that reproduces the seeds' rubric-v1 measurement
(process-safety fails 32 of 40 records, 30 of 38 sessions), so it must say `broken` and when;
every real ledger of ../shared/conformance/real/ must report every check; judge drift is
checked through the official SDK against the loopback scripted server.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest
from judge_helpers import GOLD_ARG, lines, run_args
from real_ledgers import REAL_LEDGERS, copy_real_ledger

from evalkit import journal
from evalkit.analyses.measurability import ledger_profile
from evalkit.analyses.monitor import (
    FACT_FLAGS,
    STATUSES,
    State,
    monitor,
    monitor_records,
)
from evalkit.analyses.page_tables import SUMMARY
from evalkit.cli.main import main
from evalkit.cli.monitor import EXIT_BROKEN
from evalkit.js.timestamps import format_iso
from evalkit.judge.scripted_server import Reply, ScriptedServer, rules_reply
from evalkit.rubrics.registry import get_rubric
from evalkit.simulate import build_preset
from evalkit.stats import confidence_sequence

_RULE_CHECKS = 9  # three verdict shares, rules 1-6 (3 and 4 as "set aside")
_FACT_CHECKS = len(FACT_FLAGS) + 3  # the flags, spiral > 0, the two lists


@pytest.fixture(scope="module")
def preset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_preset(tmp_path_factory.mktemp("preset") / "metrics").metrics_dir


def _band(report, rubric: str, name: str):
    (found,) = [b for b in report.bands if b.check.rubric == rubric and b.check.name == name]
    return found


def test_the_seeds_v1_data_say_broken_and_when(preset: Path) -> None:
    records = journal.read(preset / journal.JOURNAL_NAME).records
    fails = [
        r
        for r in records
        for d in r["dimensions"]
        if d["id"] == "process-safety" and d["status"] == "fail"
    ]
    assert len(records) == 40 and len(fails) == 32  # the rubric-v2 text's numbers
    report = monitor(preset)
    ps = _band(report, "rubric-v1", "process-safety: fail")
    assert (ps.sessions, ps.n, ps.fires) == (38, 38, 30)  # 30 of 38 sessions, as rubric-v2 says
    assert report.repeat_records == 2  # two re-scores, not counted twice
    assert ps.state is State.BROKEN and ps.check.alarm
    # when: recomputed here from the journal's first record of each session, in order
    seen, outcomes, ids = set(), [], []
    for r in records:
        if r["session_id"] in seen:
            continue
        seen.add(r["session_id"])
        status = next(d["status"] for d in r["dimensions"] if d["id"] == "process-safety")
        outcomes.append(status == "fail")
        ids.append(r["session_id"])
    first = confidence_sequence(outcomes).first_above(0.1)
    assert first is not None and ps.state_at == first and ps.state_session == ids[first - 1]
    assert ps.band.interval(first).low > 0.1 and ps.band.interval(first - 1).low <= 0.1


def test_the_command_exits_4_naming_the_broken_check(
    preset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["monitor", "--metrics-dir", str(preset), "--no-progress"]) == EXIT_BROKEN
    out, err = capsys.readouterr()
    assert "rubric-v1 · process-safety: fail" in out and "broken" in out
    assert "check(s) broken" in err and "process-safety: fail (since session " in err
    # a ceiling above every alarm's band: nothing broken, exit 0
    assert (
        main(["monitor", "--metrics-dir", str(preset), "--ceiling", "0.99", "--no-progress"]) == 0
    )


def test_every_check_is_reported_in_json_and_csv(
    preset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["monitor", "--metrics-dir", str(preset), "--format", "json", "--no-progress"])
    data = json.loads(capsys.readouterr().out)
    dims = get_rubric("rubric-v1").dimension_ids
    assert len(data["checks"]) == len(dims) * len(STATUSES) + _FACT_CHECKS + _RULE_CHECKS
    assert {c["check"] for c in data["checks"]} >= {f"{d}: {s}" for d in dims for s in STATUSES}
    assert data["broken"] == [
        "rubric-v1 · verification-evidence: fail",
        "rubric-v1 · process-safety: fail",
    ]
    for c in data["checks"]:
        assert c["n"] + c["unmeasured"] == c["sessions"] == 38
        if c["n"]:
            assert c["lower"] <= c["rate"] <= c["upper"]
            assert c["lower"] <= c["fixed_n_lower"] and c["fixed_n_upper"] <= c["upper"]
    main(["monitor", "--metrics-dir", str(preset), "--format", "csv", "--no-progress"])
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["check"] for r in rows] == [c["check"] for c in data["checks"]]


@pytest.mark.parametrize("prefix", sorted(REAL_LEDGERS))
def test_every_real_ledger_reports_every_check(
    prefix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = copy_real_ledger(prefix, tmp_path / prefix)
    code = main(["monitor", "--metrics-dir", str(ledger), "--format", "json", "--no-progress"])
    assert code in (0, EXIT_BROKEN)
    data = json.loads(capsys.readouterr().out)
    sessions = REAL_LEDGERS[prefix][0]
    assert data["sessions"] == {"rubric-v1": sessions, "rubric-v2": sessions}
    assert any("scored in memory" in note for note in data["notes"])
    assert not (ledger / journal.JOURNAL_NAME).exists()  # nothing written
    for version in ("rubric-v1", "rubric-v2"):
        dims = get_rubric(version).dimension_ids
        mine = [c for c in data["checks"] if c["rubric"] == version]
        assert len(mine) == len(dims) * len(STATUSES) + _FACT_CHECKS + _RULE_CHECKS
        for c in mine:
            assert c["n"] + c["unmeasured"] == sessions
            assert c["unmeasured"] == sum(r["count"] for r in c["unmeasured_reasons"])
    assert (code == EXIT_BROKEN) == bool(data["broken"])


def test_an_unmeasured_source_is_counted_apart_never_a_zero(tmp_path: Path) -> None:
    # golden: session records only, no events.jsonl: the third state for every event signal
    report = monitor(copy_real_ledger("golden", tmp_path / "golden"), rubric="rubric-v2")
    ps = _band(report, "rubric-v2", "process-safety: fail")
    assert ps.n == 0 and ps.unmeasured.count == 7 and ps.rate is None
    assert ps.interval == (None, None) and ps.state is State.UNDECIDED
    assert "no telemetry" in ps.unmeasured.reasons[0][0]
    pf = _band(report, "rubric-v2", "plan-fidelity: fail")
    assert pf.n == 7  # a ledger field, measured without any telemetry


def test_since_and_rubric_select_sessions(preset: Path) -> None:
    full = monitor(preset)
    ids = _band(full, "rubric-v1", "process-safety: fail").session_ids
    start = ledger_profile(preset).session_starts[ids[20]]
    assert start is not None
    later = monitor(preset, since=format_iso(start))
    kept = _band(later, "rubric-v1", "process-safety: fail").session_ids
    assert kept == ids[20:]  # the sessions that started at or after session 21's start
    assert monitor(preset, rubric="rubric-v2").bands == ()


def test_judge_dimensions_are_monitored_when_present(tmp_path: Path) -> None:
    from record_factory import make_record

    records = [make_record(session_id=f"s-{i}", judge=True) for i in range(12)]
    assert all(any(d["method"] == "judge" for d in r["dimensions"]) for r in records)
    report = monitor_records(records)
    (judged,) = {b.check.kind for b in report.bands if b.check.name.startswith("instruction")}
    assert judged == "judge dimension"
    ia = _band(report, records[0]["rubric_version"], "instruction-adherence: pass")
    assert ia.n == 12 and ia.fires == 12


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--ceiling", "1.5"], "a rate must be in"),
        (["--floor", "0.2"], "floor (0.2) must be below ceiling"),
        (["--alpha", "0"], "alpha must be strictly between"),
        (["--since", "yesterday"], "not an ISO-8601"),
        (["--runlog", "x.jsonl"], "--runlog and --gold go together"),
    ],
)
def test_bad_arguments_exit_1_naming_them(
    preset: Path, args: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["monitor", "--metrics-dir", str(preset), "--no-progress", *args])
    except SystemExit as exc:  # argparse's own refusal (exit 1, SPEC section 3)
        code = exc.code
    assert code == 1
    assert match in capsys.readouterr().err


def test_a_missing_directory_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["monitor", "--metrics-dir", str(tmp_path / "nope"), "--no-progress"]) == 1
    assert "no such metrics directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["monitor", "--metrics-dir", str(tmp_path / "empty"), "--no-progress"]) == 1
    assert "neither eval.jsonl nor sessions.jsonl" in capsys.readouterr().err


def test_bad_journal_lines_are_named_and_the_rest_counted(
    preset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "eval.jsonl"
    text = (preset / journal.JOURNAL_NAME).read_text(encoding="utf-8")
    target.write_text("not json\n" + text, encoding="utf-8")
    report = monitor(target)
    assert len(report.skipped_lines) == 1 and report.skipped_lines[0].startswith("line 1:")
    assert _band(report, "rubric-v1", "process-safety: fail").sessions == 38
    main(["monitor", "--metrics-dir", str(target), "--no-progress"])
    assert "1 line(s) skipped" in capsys.readouterr().out


# ------------------------------------------------------------------------------- judge drift

_CHANGED = (
    "```json\n"
    + json.dumps(
        [{"id": "instruction-adherence", "status": "pass", "evidence": "looks fine", "score": None}]
    )
    + "\n```\n"
)


@pytest.mark.slow
def test_a_silent_model_change_shows_as_a_broken_drift_band(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "gold-runs.jsonl"
    changed = {"on": False}

    def script(request):  # the same model id before and after: a silent change
        return Reply(_CHANGED) if changed["on"] else rules_reply(request)

    drift = ["monitor", "--runlog", str(out), "--gold", GOLD_ARG, "--ceiling", "0.2"]
    with ScriptedServer(script) as server:
        first = run_args("openai:m", out, "--repeats", "1", "--quiet", url=server.base_url())
        assert main(first) == 0
        assert main([*drift, "--format", "json"]) == 0  # the rule judge's own 23 of 199 misses
        before = json.loads(capsys.readouterr().out)["checks"][0]
        assert before["state"] != "broken" and before["fires"] == 23 and before["n"] == 199
        changed["on"] = True
        again = run_args("openai:m", out, "--repeats", "2", "--quiet", url=server.base_url())
        assert main(again) == 0  # resumes: only repeat 1 of every item is called
    assert Counter(d["model"] for d in lines(out)) == {"m": 2 * 199}
    capsys.readouterr()
    assert main([*drift, "--format", "json"]) == EXIT_BROKEN
    data = json.loads(capsys.readouterr().out)
    (band,) = data["checks"]
    assert band["kind"] == "judge drift" and band["state"] == "broken"
    assert band["broken_at"] > 199  # after the change, never before it
    assert band["fires"] == 23 + 126  # every gold label but the 73 pass items, missed
    assert data["unit"] == "calls" and any("model ids" in n for n in data["notes"])


# ------------------------------------------------------------------- the study page helpers


def test_the_page_says_what_is_broken_and_the_price(preset: Path) -> None:
    from evalkit.analyses import monitor_page as mp
    from evalkit.analyses.landing import headline

    report = monitor(preset)
    text = mp.states_text(report)
    # check names reach Markdown escaped (evalkit.files.escape)
    assert r"**broken**: rubric\-v1 · process\-safety: fail since session " in text
    price = mp.price_text(report)
    assert "times as wide as the fixed-n Wilson interval" in price
    assert "at 400 sessions and a 10% rate it is 1.60 times as wide" in price
    assert all(r["ratio"] > 1 for r in mp.price_rows(report))  # the band is never narrower
    shown = mp.shown_bands(report)
    assert shown[0].state is State.BROKEN and all(b.check.alarm for b in shown)
    # the folded table's summary row counts the alarms' states, never a share's as an alarm
    frame = mp.states_frame(report)
    alarm_broken = int(((frame["role"] == "alarm") & (frame["state"] == "broken")).sum())
    summary = frame.attrs[SUMMARY]
    assert (
        summary.startswith(f"{len(frame)} checks: alarm checks ") and "shares (no alarm)" in summary
    )
    assert f"{alarm_broken} broken" in summary
    fig = mp.plot_bands(report)
    assert len([ax for ax in fig.axes if ax.has_data()]) == len(shown)
    figures = mp.figures(report)
    json.dumps(figures, allow_nan=False)
    card = headline("monitor", {"status": "ok", **json.loads(json.dumps(figures))})
    assert card is not None and card.text.startswith("2 alarm checks broken")
    assert "rubric-v1 · process-safety: fail: broken since session " in " ".join(card.details)
