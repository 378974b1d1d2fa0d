"""``evalkit explore``: one offline HTML file for a journal, checked in headless Chromium.

A seeded ledger is journaled under both rubrics by the real command line; hostile records
(script in session ids, evidence and a judge's reply, a lone surrogate, U+2028) and one record
whose verdict was changed and resealed are added to the same journal. The page is opened with
URL fragments; what it renders is compared with the journal as evalkit reads it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from record_factory import make_record

from evalkit import journal
from evalkit.analyses.measurability import ledger_profile, record_measurability
from evalkit.cli.main import main
from evalkit.record.seal import seal_record
from evalkit.simulate import hostile_ledgers
from evalkit.stats import confidence_sequence, wilson_interval
from evalkit.views.explorer import ExplorerSource, build_explorer, write_explorer
from tests.browser import DevTools, chromium, open_page

HOSTILE_SESSION = '"><img src=x onerror=alert(1)>'
HOSTILE_EVIDENCE = "</script><script>alert(2)</script><!-- \u2028 \ud800"
HOSTILE_REPLY = "<svg onload=alert(3)></svg> javascript:alert(4)"
STATUSES = ("pass", "fail", "not-applicable", "cannot-determine")
_DATA = re.compile(r'<script type="application/json" id="explorer-data">(.*?)</script>', re.S)

ROWS = (
    "JSON.stringify(Array.from(document.querySelectorAll('#record-table tr[data-run-id]'))"
    ".map(t => t.dataset.runId))"
)
RECORD = """JSON.stringify({
  run: document.querySelector('#record') && document.querySelector('#record').dataset.runId,
  line: document.querySelector('#record') && document.querySelector('#record').dataset.line,
  links: Array.from(document.querySelectorAll('#record-table tr[data-run-id] a')).map(a => a.hash),
  dims: Array.from(document.querySelectorAll('#dimensions tbody tr')).map(tr => ({
    dim: tr.dataset.dimension, flip: tr.classList.contains('flip'),
    cells: Array.from(tr.cells).slice(1).map(td => td.textContent)})),
  judge: (document.querySelector('#judge') || {}).textContent || '',
  verify: (document.querySelector('#verify-state') || {}).textContent || '',
  onattrs: Array.from(document.querySelectorAll('*')).filter(el => Array.from(el.attributes)
      .some(a => a.name.toLowerCase().startsWith('on'))).length,
  imgs: document.querySelectorAll('img').length,
  scripts: document.scripts.length,
})"""


def _score(metrics: Path, rubric: str) -> None:
    argv = ["score", "--all", "--journal", "--metrics-dir", str(metrics), "--rubric", rubric]
    assert main([*argv, "--no-progress"]) == 0


def _hostile_records() -> list[dict[str, Any]]:
    rec = make_record(session_id=HOSTILE_SESSION, rubric_version="rubric-v2")
    rec["dimensions"][0]["evidence"] = HOSTILE_EVIDENCE
    rec["dimensions"][-1]["evidence"] = HOSTILE_REPLY  # the judge dimension's reply
    other = make_record(
        session_id=HOSTILE_SESSION,
        rubric_version="rubric-v1",
        judge=False,
        timestamp="2026-10-02T00:00:00.000Z",
    )
    other["dimensions"][0]["status"] = "fail"  # a flip against the rubric-v2 record
    return [rec, other]


def _drift_one(path: Path) -> dict[str, Any]:
    """Change one stored rubric-v2 verdict and reseal it: verify must call it a drift."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        dim = next(d for d in rec["dimensions"] if d["id"] == "plan-fidelity")
        if rec["rubric_version"] == "rubric-v2" and dim["status"] != "not-applicable":
            dim["status"] = "fail" if dim["status"] != "fail" else "pass"
            rec["provenance"].pop("record_sha256")
            rec = seal_record(rec)
            lines[i] = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return rec
    raise AssertionError("no rubric-v2 record to change")


@pytest.fixture(scope="module")
def explored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("explore")
    metrics = tmp / "metrics"
    hostile_ledgers.generate_ledger(metrics, n_sessions=40, n_events=3000, seed=7)
    _score(metrics, "rubric-v1")
    _score(metrics, "rubric-v2")
    drifted = _drift_one(metrics / "eval.jsonl")
    for rec in _hostile_records():
        journal.append(metrics / "eval.jsonl", rec)
    # the reference engine can append the same run twice: one run id on two lines
    first = (metrics / "eval.jsonl").read_text(encoding="utf-8").splitlines()[0]
    with (metrics / "eval.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(first + "\n")
    page = tmp / "explorer.html"
    assert (
        main(["explore", "--metrics-dir", str(metrics), "--out", str(page), "--no-progress"]) == 0
    )
    read = journal.read(metrics / "eval.jsonl")
    return {"metrics": metrics, "page": page, "read": read, "drifted": drifted, "tmp": tmp}


@pytest.fixture(scope="module")
def browser(explored: dict[str, Any]) -> Any:
    with DevTools(chromium(), explored["tmp"] / "profile") as tools:
        yield tools


def _status(rec: dict[str, Any], dim: str) -> str | None:
    return next((d["status"] for d in rec["dimensions"] if d["id"] == dim), None)


def _latest(records: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for rec in records:
        out[(rec["session_id"], rec["rubric_version"])] = rec
    return out


def _without_fragment(urls: list[str]) -> set[str]:
    return {u.split("#", 1)[0] for u in urls}


# ----------------------------------------------------------------------------- the page itself


def test_page_is_one_file_that_loads_nothing(explored: dict[str, Any]) -> None:
    html = explored["page"].read_text(encoding="utf-8")
    data = _DATA.search(html)
    assert data is not None
    # the data holds the hostile text, as JSON escapes: nothing in it can open or close markup
    assert "alert(2)" in data.group(1) and "<" not in data.group(1) and ">" not in data.group(1)
    shell = (html[: data.start(1)] + html[data.end(1) :]).lower()
    for banned in ("<link", "<img", "<iframe", "@import", "url(", " src=", "<base", "alert("):
        assert banned not in shell, banned
    # exactly one executable script beside the data
    assert shell.count("<script") == 2 and shell.count("</script>") == 2
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    assert "default-src &#x27;none&#x27;" in policy.group(1)
    assert "connect-src &#x27;none&#x27;" in policy.group(1)


@pytest.mark.browser
def test_fragment_filter_renders_exactly_those_records(
    explored: dict[str, Any], browser: Any
) -> None:
    records = explored["read"].records
    fragment = "rubric=rubric-v1&dimension=process-safety&status=fail"
    info = open_page(browser, explored["page"], ROWS, fragment)
    want = [
        r["run_id"]
        for r in records
        if r["rubric_version"] == "rubric-v1" and _status(r, "process-safety") == "fail"
    ]
    assert want, "the seeded ledger should have rubric-v1 process-safety failures"
    assert sorted(info["extra"]) == sorted(want)
    # every record of the journal is a row of the unfiltered table (all on one page here)
    every = open_page(browser, explored["page"], ROWS)["extra"]
    assert len(records) <= 100 and sorted(every) == sorted(r["run_id"] for r in records)
    # the other filters: session id text, rubric alone, a status alone
    sid = records[3]["session_id"]
    got = open_page(browser, explored["page"], ROWS, "q=" + sid)["extra"]
    assert sorted(got) == sorted(
        r["run_id"]
        for r in records
        if sid.lower() in r["session_id"].lower() or sid.lower() in r["run_id"].lower()
    )
    got = open_page(browser, explored["page"], ROWS, "rubric=rubric-v2&status=cannot-determine")[
        "extra"
    ]
    assert sorted(got) == sorted(
        r["run_id"]
        for r in records
        if r["rubric_version"] == "rubric-v2"
        and any(d["status"] == "cannot-determine" for d in r["dimensions"])
    )


def _measured(explored: dict[str, Any]) -> dict[int, Any]:
    """Each record's measurability (the one helper), by its position in the journal."""
    profile = ledger_profile(explored["metrics"])
    return {i: record_measurability(r, profile) for i, r in enumerate(explored["read"].records)}


@pytest.mark.browser
def test_flag_and_date_filters(explored: dict[str, Any], browser: Any) -> None:
    records = explored["read"].records
    measured = _measured(explored)
    got = open_page(browser, explored["page"], ROWS, "flag=contaminated")["extra"]
    want = [r["run_id"] for i, r in enumerate(records) if measured[i].facts["window_contaminated"]]
    assert want and sorted(got) == sorted(want)
    # unmeasured, for one dimension: exactly the records whose status there was not measured
    fragment = "rubric=rubric-v1&dimension=process-safety&flag=unmeasured"
    got = open_page(browser, explored["page"], ROWS, fragment)["extra"]
    signal = "dimension:process-safety"
    want = [
        r["run_id"]
        for i, r in enumerate(records)
        if r["rubric_version"] == "rubric-v1"
        and _status(r, "process-safety") is not None  # the filter needs the dimension
        and not measured[i].of(signal).measured
    ]
    assert want and sorted(got) == sorted(want)  # guard emission began after these sessions
    # one day of session starts: the hand-made hostile sessions have no start in the ledger
    starts = open_page(browser, explored["page"], ROWS, "from=2026-07-01&to=2026-07-01")["extra"]
    sessions = {r["session_id"] for r in records if r["run_id"] in starts}
    assert HOSTILE_SESSION not in sessions and sessions
    assert all("2026-07-01" in s for s in sessions)


@pytest.mark.browser
def test_run_fragment_shows_its_evidence_beside_the_other_version(
    explored: dict[str, Any], browser: Any
) -> None:
    records = explored["read"].records
    latest = _latest(records)
    # a run id on one line: the copied first line breaks the journal's chain where it lands
    once = [r for r in records if r["run_id"] not in explored["read"].duplicates]
    rec = next(
        r
        for r in once
        if r["rubric_version"] == "rubric-v1" and (r["session_id"], "rubric-v2") in latest
    )
    other = latest[(rec["session_id"], "rubric-v2")]
    info = open_page(browser, explored["page"], RECORD, "run=" + rec["run_id"])
    got = info["extra"]
    assert got["run"] == rec["run_id"]
    rows = {row["dim"]: row for row in got["dims"]}
    for dim in rec["dimensions"]:
        assert dim["evidence"] in rows[dim["id"]]["cells"][0]
    for dim in other["dimensions"]:
        assert dim["evidence"] in rows[dim["id"]]["cells"][1]
    flips = {
        d["id"] for d in rec["dimensions"] if _status(other, d["id"]) not in (None, d["status"])
    }
    assert {d for d, row in rows.items() if row["flip"]} == flips
    assert (
        "guard-friction" in rows and "absent in this version" in rows["guard-friction"]["cells"][0]
    )
    assert got["verify"].startswith("When this page was built: agreement")


@pytest.mark.browser
def test_a_run_id_on_two_lines_opens_either(explored: dict[str, Any], browser: Any) -> None:
    read = explored["read"]
    ((run_id, lines),) = read.duplicates.items()
    for line in lines:
        got = open_page(browser, explored["page"], RECORD, f"run={run_id}&line={line}")["extra"]
        assert (got["run"], got["line"]) == (run_id, str(line))
    listed = open_page(browser, explored["page"], RECORD, "q=" + run_id)["extra"]["links"]
    opened = [parse_qs(h.lstrip("#")) for h in listed]
    # each row opens its own line, and keeps the filter so "back" returns to it
    assert sorted((o["run"][0], int(o["line"][0]), o["q"][0]) for o in opened) == sorted(
        (run_id, line, run_id) for line in lines
    )


@pytest.mark.browser
def test_a_changed_verdict_shows_as_drift(explored: dict[str, Any], browser: Any) -> None:
    drifted = explored["drifted"]
    got = open_page(browser, explored["page"], RECORD, "run=" + drifted["run_id"])["extra"]
    assert "drift" in got["verify"] and "verdict changed: plan-fidelity" in got["verify"]


@pytest.mark.browser
def test_hostile_text_stays_text(explored: dict[str, Any], browser: Any) -> None:
    hostile = next(
        r
        for r in explored["read"].records
        if r["session_id"] == HOSTILE_SESSION and r["rubric_version"] == "rubric-v2"
    )
    for fragment in (
        "run=" + hostile["run_id"],
        "q=" + HOSTILE_SESSION,
        "dimension=verification-evidence",
    ):
        info = open_page(browser, explored["page"], RECORD, fragment)
        got, dom = info["extra"], info["dom"]
        assert dom["ran"] == [] and info["dialogs"] == [], fragment
        assert got["onattrs"] == 0 and got["imgs"] == 0 and got["scripts"] == 2, fragment
        assert HOSTILE_SESSION in dom["text"], fragment
        external = [u for u in info["requests"] if not u.startswith(("file://", "data:"))]
        assert external == [] and info["failed"] == [], fragment
    info = open_page(browser, explored["page"], RECORD, "run=" + hostile["run_id"])
    got = info["extra"]
    rows = {row["dim"]: row for row in got["dims"]}
    assert (
        "</script><script>alert(2)</script><!-- \u2028" in rows["verification-evidence"]["cells"][0]
    )
    assert HOSTILE_REPLY in got["judge"] and "uncalibrated" in got["judge"]
    assert rows["verification-evidence"]["flip"]  # rubric-v1 said fail, rubric-v2 pass


@pytest.mark.browser
def test_no_request_but_the_file(explored: dict[str, Any], browser: Any) -> None:
    url = explored["page"].resolve().as_uri()
    for fragment in (None, "run=" + explored["read"].records[0]["run_id"], "rubric=rubric-v2"):
        info = open_page(
            browser,
            explored["page"],
            "JSON.stringify(performance.getEntriesByType('resource').length)",
            fragment,
        )
        assert _without_fragment([u for u in info["requests"] if not u.startswith("data:")]) == {
            url
        }
        assert info["failed"] == [] and info["extra"] == 0


@pytest.mark.browser
def test_rates_are_python_wilson_intervals(explored: dict[str, Any], browser: Any) -> None:
    """The page's Wilson port against evalkit.stats.wilson_interval, cell by cell."""
    extra = """JSON.stringify(Array.from(document.querySelectorAll('#rates tbody tr')).map(tr => ({
      rubric: tr.dataset.rubric, dim: tr.dataset.dimension,
      cells: Array.from(tr.cells).slice(2, 6).map(td => td.textContent)})))"""
    got = open_page(browser, explored["page"], extra)["extra"]
    records = explored["read"].records
    measured = _measured(explored)
    latest = {(r["session_id"], r["rubric_version"]): i for i, r in enumerate(records)}
    assert got
    for row in got:
        signal = f"dimension:{row['dim']}"
        statuses = [
            _status(records[i], row["dim"])
            for (_, rub), i in latest.items()
            if rub == row["rubric"] and measured[i].of(signal).measured
        ]
        statuses = [s for s in statuses if s is not None]
        n = len(statuses)
        for status, cell in zip(STATUSES, row["cells"], strict=True):
            k = statuses.count(status)
            if n == 0:  # every record's signal unmeasured: no rate at all, never 0/0
                assert row["cells"][0].startswith("no measured record: "), row
                break
            if n == 1:  # one session is a case, not a rate: no interval (as the studies)
                assert cell == f"{k}/{n} (n = 1, no CI)", row
                continue
            lo, hi = wilson_interval(k, n)
            assert cell == f"{k}/{n} = {100 * k / n:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%]", row


@pytest.mark.browser
def test_fire_rates_over_time_say_which_band(explored: dict[str, Any], browser: Any) -> None:
    extra = """JSON.stringify({charts: Array.from(document.querySelectorAll('#fire-rates figure'))
      .map(f => f.dataset.rubric + ' ' + f.dataset.dimension),
      note: document.querySelector('#fire-rates .note').textContent})"""
    got = open_page(browser, explored["page"], extra, "rubric=rubric-v1")["extra"]
    assert "rubric-v1 process-safety" in got["charts"]
    assert all(c.startswith("rubric-v1 ") for c in got["charts"])
    assert "efficiency-kpis" not in " ".join(got["charts"])  # reported, never graded
    assert "anytime-valid 95% confidence sequence" in got["note"]


def test_the_fire_rate_band_is_the_monitors_confidence_sequence(
    explored: dict[str, Any],
) -> None:
    """Each chart's band is evalkit.stats.confidence_sequence of its own (k, n) steps."""
    series = _payload(explored["page"])["series"]
    assert series
    for s in series:
        assert s["band"] == "anytime"
        ks, ns = [0, *s["k"]], [0, *s["n"]]
        # rebuild the outcome stream from the sampled running counts: only the sampled points
        # are pinned, so the fires between two of them are placed first (any order gives the
        # same band at the sampled points: the mixture bound depends on (fires, n) only)
        outcomes: list[bool] = []
        for i in range(1, len(ns)):
            fired, seen = ks[i] - ks[i - 1], ns[i] - ns[i - 1]
            outcomes += [True] * fired + [False] * (seen - fired)
        band = confidence_sequence(outcomes)
        at = [n - 1 for n in s["n"]]
        assert s["lo"] == [round(float(band.lower[i]), 5) for i in at]
        assert s["hi"] == [round(float(band.upper[i]), 5) for i in at]
        points = zip(s["lo"], s["hi"], s["k"], s["n"], strict=True)
        assert all(lo <= k / n <= hi for lo, hi, k, n in points)


# ----------------------------------------------------------------------------- the command


def _payload(page: Path) -> dict[str, Any]:
    html = page.read_text(encoding="utf-8")
    data = re.search(
        r'<script type="application/json" id="explorer-data">(.*?)</script>', html, re.S
    )
    assert data is not None
    return json.loads(data.group(1))


def test_explore_errors_name_the_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", "--metrics-dir", str(tmp_path / "none")]) == 1
    assert f"{tmp_path / 'none' / 'eval.jsonl'}: no journal file there" in capsys.readouterr().err
    assert main(["explore", "--fleet", str(tmp_path / "nothing-*")]) == 1


@pytest.mark.browser
def test_fleet_page_holds_every_repository(
    explored: dict[str, Any], browser: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    second = tmp_path / "repo-b" / "metrics"
    hostile_ledgers.generate_ledger(second, n_sessions=6, n_events=200, seed=3)
    _score(second, "rubric-v2")
    (tmp_path / "repo-c" / "metrics").mkdir(parents=True)  # no journal: left out, named
    fleet = tmp_path / "fleet.txt"
    fleet.write_text(f"{explored['metrics']}\n{second}\n{tmp_path / 'repo-c' / 'metrics'}\n")
    out = tmp_path / "fleet.html"
    assert (
        main(["explore", "--fleet", str(fleet), "--out", str(out), "--no-verify", "--no-progress"])
        == 0
    )
    err = capsys.readouterr().err
    assert (
        f"{tmp_path / 'repo-c' / 'metrics' / 'eval.jsonl'}: no journal file there; left out" in err
    )
    data = _payload(out)
    assert [s["label"] for s in data["sources"]] == [str(explored["metrics"]), str(second)]
    assert [s["verify"] for s in data["sources"]] == ["not requested", "not requested"]
    theirs = journal.read(second / "eval.jsonl").records
    assert len(data["records"]) == len(explored["read"].records) + len(theirs)
    # the repository filter, in the browser: exactly the second repository's records
    got = open_page(browser, out, ROWS, "source=1")["extra"]
    assert sorted(got) == sorted(r["run_id"] for r in theirs)


def test_library_call_is_the_command_and_deterministic(explored: dict[str, Any]) -> None:
    source = ExplorerSource.of_metrics_dir(explored["metrics"])
    page = build_explorer([source], verify=False)
    again = write_explorer(explored["metrics"], explored["tmp"] / "again.html", verify=False)
    assert again.read_text(encoding="utf-8") == page
    assert len(_payload(again)["records"]) == len(explored["read"].records)


# ----------------------------------------------------------------------------- size, at scale


@pytest.mark.slow
@pytest.mark.browser
def test_5000_sessions_under_two_rubrics_fit_in_20_mb(tmp_path: Path) -> None:
    metrics = tmp_path / "metrics"
    hostile_ledgers.generate_ledger(metrics, n_sessions=5000, n_events=100_000, seed=11)
    _score(metrics, "rubric-v1")
    _score(metrics, "rubric-v2")
    page = tmp_path / "explorer.html"
    # verified or not, the page holds the same records; verify's one line each is small
    assert (
        main(
            [
                "explore",
                "--metrics-dir",
                str(metrics),
                "--out",
                str(page),
                "--no-verify",
                "--no-progress",
            ]
        )
        == 0
    )
    size = page.stat().st_size
    records = journal.read(metrics / "eval.jsonl").records
    assert len({r["session_id"] for r in records}) >= 4900 and len(records) >= 9800
    assert size <= 20 * 1024 * 1024, size
    fragment = "rubric=rubric-v2&dimension=plan-fidelity&status=fail"
    want = sorted(
        r["run_id"]
        for r in records
        if r["rubric_version"] == "rubric-v2" and _status(r, "plan-fidelity") == "fail"
    )
    extra = (
        "JSON.stringify({rows: "
        + ROWS
        + ", summary: document.querySelector('#summary').textContent})"
    )
    with DevTools(chromium(), tmp_path / "profile") as tools:
        info = open_page(tools, page, extra, fragment)
    got = info["extra"]
    rows = json.loads(got["rows"])
    assert len(rows) == min(100, len(want)) and set(rows) <= set(want)
    assert got["summary"].startswith(f"{len(want)} of {len(records)} records")
