"""Every real ledger of ``../shared/conformance/real/`` through every ledger study, honestly.

Each ledger is copied into a temp dir, journaled under rubric-v2 and run through the three
studies that read a ledger (``threshold-study``, ``rubric-replay`` and ``monitor``; the
agreement, judge-calibration and prevalence studies read label files, not ledgers). A test per ledger pins
what was unmeasured and why, and the instrument flags; every page is scanned for what a reader
should not read (tests/page_scan.py). Reasoned from the ledgers themselves:

* ``ledger-2026-04-13`` (April 2026): 47 events, all ``subagent_stop``; every session before
  2026-07-16. Guard signals unmeasured on 10 of 10, gate signals too (no gate telemetry),
  ``changes_unverified`` true on all 10 (files changed, zero gate runs) and rule 6 failing all
  of them: both flagged as firing for lack of telemetry.
* ``golden``, ``invalid-golden``, ``sample``: no ``events.jsonl`` (the third state): every
  event-derived signal unmeasured; a gate dimension that is ``not-applicable`` (nothing changed,
  no waves ran) stays measured: golden has 2 sessions with no file changed and 1 without waves.
* ``happy``: gate telemetry and a session on 2026-07-16: measured throughout (rubric-v1 writes
  no guard count on its pass branch, so that one fact has no number).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from evalkit.studies import run as studies
from tests.browser import DevTools, assert_inert, chromium, open_page
from tests.page_scan import SCAN, defects
from tests.real_ledgers import REAL_LEDGERS, journaled_real_ledger

GATES = "no quality_gate event anywhere in events.jsonl: 47 events, all subagent_stop"
GUARDS = "guard emission began 2026-07-16; the session started before it"
NO_EVENTS = "no telemetry: no events.jsonl"
LACK = "fires for lack of telemetry"
BOTH = ("rubric-v1", "rubric-v2")


@dataclass(frozen=True)
class Pin:
    """What a ledger's pages must say: unmeasured records, dimensions, flags, rule labels."""

    threshold: tuple[int, int, tuple[str, ...]]
    dimensions: dict[tuple[str, str], int]
    flags: set[tuple[str, str, str]]
    rules: list[tuple[str, int, str, int, int]] = field(default_factory=list)
    #: whether the monitor page draws any alarm check's band (else it says why, in a sentence)
    bands_drawn: bool = True


def _each(rubrics: tuple[str, ...], **per: int) -> dict[tuple[str, str], int]:
    return {(r, d.replace("_", "-")): n for r in rubrics for d, n in per.items()}


def _flags(rubrics: tuple[str, ...], *items: tuple[str, str]) -> set[tuple[str, str, str]]:
    return {(r, signal, flag) for r in rubrics for signal, flag in items}


def _third_state(n: int, ve: int, gh: int, rule1: int, rule6_pass: int) -> Pin:
    flags = _flags(
        BOTH,
        ("fact changes_unverified", "unmeasured"),
        ("fact guard_blocked_conspicuous", "unmeasured"),
        ("fact red_runs_then_green_finish", "unmeasured"),
        ("rule judge: rule 1 → cannot-determine", "unmeasured"),
    )
    rules = [(r, 1, "cannot-determine", rule1, rule1) for r in BOTH]
    if rule6_pass:
        flags |= _flags(BOTH, ("rule judge: rule 6 → pass", "unmeasured"))
        rules = [x for r in BOTH for x in ((r, 1, "cannot-determine", rule1, rule1),
                                          (r, 6, "pass", rule6_pass, rule6_pass))]  # fmt: skip
    return Pin(
        threshold=(n, n, (NO_EVENTS,)),
        dimensions={
            **_each(BOTH, verification_evidence=ve, gate_health=gh, process_safety=n),
            ("rubric-v2", "guard-friction"): n,
        },
        flags=flags,
        rules=rules,
    )


PINS: dict[str, Pin] = {
    "ledger-2026-04-13": Pin(
        threshold=(10, 10, (GUARDS,)),
        dimensions={
            **_each(BOTH, verification_evidence=10, gate_health=10),
            ("rubric-v1", "process-safety"): 10,  # v1's pass rests on guard silence
            ("rubric-v2", "guard-friction"): 10,
        },
        flags=_flags(
            BOTH,
            ("fact changes_unverified", LACK),
            ("rule judge: rule 6 → fail", LACK),
            ("fact guard_blocked_conspicuous", "unmeasured"),
            ("fact red_runs_then_green_finish", "unmeasured"),
        ),
        rules=[(r, 6, "fail", 10, 10) for r in BOTH],
    ),
    "golden": _third_state(7, ve=5, gh=6, rule1=5, rule6_pass=2),
    "invalid-golden": replace(
        _third_state(11, ve=10, gh=7, rule1=10, rule6_pass=1), bands_drawn=False
    ),
    "sample": replace(_third_state(4, ve=4, gh=3, rule1=4, rule6_pass=0), bands_drawn=False),
    "happy": Pin(
        threshold=(0, 1, ()),
        dimensions={},
        flags={("rubric-v1", "fact guard_blocked_conspicuous", "unmeasured")},
        rules=[(r, 6, "pass", 1, 0) for r in BOTH],
        bands_drawn=False,  # one session: no alarm check fired or reached a state
    ),
}
assert set(PINS) == set(REAL_LEDGERS)  # a ledger added to the corpus needs its pin


@dataclass(frozen=True)
class LedgerRuns:
    prefix: str
    metrics_dir: Path
    threshold: studies.StudyRun
    replay: studies.StudyRun
    monitor: studies.StudyRun

    @property
    def pages(self) -> tuple[studies.StudyRun, ...]:
        return (self.threshold, self.replay, self.monitor)


LEDGER_STUDIES = ("threshold-study", "rubric-replay", "monitor")


def _run_all(prefix: str, root: Path) -> LedgerRuns:
    metrics = journaled_real_ledger(prefix, root / "metrics")
    runs = {
        name: studies.run_study(name, {"metrics_dir": str(metrics)}, out_dir=root / name)
        for name in LEDGER_STUDIES
    }
    return LedgerRuns(
        prefix, metrics, runs["threshold-study"], runs["rubric-replay"], runs["monitor"]
    )


@pytest.fixture(scope="module")
def run_ledger(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], LedgerRuns]:
    """Each ledger's studies run once for the module (the April acceptance tests reuse them)."""
    done: dict[str, LedgerRuns] = {}

    def get(prefix: str) -> LedgerRuns:
        if prefix not in done:
            done[prefix] = _run_all(prefix, tmp_path_factory.mktemp(prefix))
        return done[prefix]

    return get


@pytest.fixture(scope="module", params=list(REAL_LEDGERS))
def ledger_runs(
    request: pytest.FixtureRequest, run_ledger: Callable[[str], LedgerRuns]
) -> LedgerRuns:
    return run_ledger(request.param)


def _text(run: studies.StudyRun) -> str:
    """The page as a reader sees it: no styles, no images, no tags."""
    page = run.html.read_text(encoding="utf-8")
    page = re.sub(r"<style.*?</style>|<img[^>]*>", " ", page, flags=re.DOTALL)
    return re.sub(r"<[^>]+>", " ", page)


@pytest.mark.notebook
def test_every_real_ledger_runs_through_every_ledger_study(ledger_runs: LedgerRuns) -> None:
    for run in ledger_runs.pages:
        assert run.ok, (ledger_runs.prefix, run.study, run.error)
        assert run.results["preregistration"]["status"] == "pre-registered"


@pytest.mark.notebook
def test_unmeasured_counts_and_flags_are_pinned_per_ledger(ledger_runs: LedgerRuns) -> None:
    pin = PINS[ledger_runs.prefix]
    t = ledger_runs.threshold.results["unmeasured"]
    assert (t["unmeasured"], t["of"], tuple(r["reason"] for r in t["reasons"])) == pin.threshold
    rates = ledger_runs.replay.results["rates"]
    unmeasured = {(r["rubric"], r["dimension"]): r["unmeasured"] for r in rates if r["unmeasured"]}
    assert unmeasured == pin.dimensions
    for r in rates:  # an unmeasured session is never in a rate's n
        total = ledger_runs.replay.results["sessions"][r["rubric"]]
        assert r["n"] + r["unmeasured"] == total
    instruments = ledger_runs.replay.results["instruments"]
    assert {(f["rubric"], f["signal"], f["flag"]) for f in instruments["flags"]} == pin.flags
    assert all(f["cause"] for f in instruments["flags"])  # each flag says why, in one line
    rules = [
        (r["rubric"], r["rule"], r["label"], r["records"], r["unmeasured"])
        for r in instruments["rule_judge"]
    ]
    assert rules == pin.rules


@pytest.mark.notebook
def test_the_monitor_counts_the_same_unmeasured_sessions_as_the_replay(
    ledger_runs: LedgerRuns,
) -> None:
    """Two studies, one helper: the monitor's bands (rubric-v2, from the journal) leave out
    the sessions the replay (rubric-v2, scored in memory) counts as unmeasured, with a cause."""
    pin = PINS[ledger_runs.prefix]
    checks = ledger_runs.monitor.results["checks"]
    total = REAL_LEDGERS[ledger_runs.prefix][0]
    for c in checks:
        assert c["n"] + c["unmeasured"] == c["sessions"] == total, c["check"]
        assert sum(r["count"] for r in c["unmeasured_reasons"]) == c["unmeasured"], c["check"]
        if c["kind"] == "dimension":
            dimension = c["check"].rsplit(": ", 1)[0]
            assert c["unmeasured"] == pin.dimensions.get(("rubric-v2", dimension), 0), c["check"]
    facts = {
        f["fact"]: f["unmeasured"]
        for f in ledger_runs.replay.results["instruments"]["facts"]
        if f["rubric"] == "rubric-v2"
    }
    for fact, unmeasured in facts.items():
        (band,) = [c for c in checks if c["check"] == f"fact {fact}"]
        assert band["unmeasured"] == unmeasured, fact
    verdicts = [r for r in pin.rules if r[0] == "rubric-v2"]
    (judge,) = [c for c in checks if c["check"] == "rule judge: fail"]
    assert judge["unmeasured"] == sum(r[4] for r in verdicts)
    page = _text(ledger_runs.monitor)
    for c in checks:  # every cause of an unmeasured session is on the page, once per cause
        for r in c["unmeasured_reasons"]:
            assert r["reason"] in page, (c["check"], r["reason"])
    drawn = ledger_runs.monitor.html.read_text(encoding="utf-8").count('class="output_png')
    assert drawn == int(pin.bands_drawn)  # the page's one plot, or none: no empty axes
    assert ("Nothing to plot: the bands of the alarm checks" in page) == (not pin.bands_drawn)


@pytest.mark.notebook
def test_pages_name_their_data_and_hold_no_raw_warning_traceback_or_path(
    ledger_runs: LedgerRuns,
) -> None:
    digest = ledger_runs.threshold.results["inputs"]["metrics_dir"]["sha256"]
    for run in ledger_runs.pages:
        text = _text(run)
        card = run.results["data_card"]
        assert card["sha256"] == digest and digest in text  # the same content as the inputs
        assert card["synthetic_preset"] is None and "synthetic preset" not in text.lower()
        assert card["ledger"]["sessions"] == REAL_LEDGERS[ledger_runs.prefix][0]
        assert card["ledger"]["events"] == REAL_LEDGERS[ledger_runs.prefix][1]
        assert "Data card." in text and "…/" + ledger_runs.metrics_dir.parent.name in text
        for raw in ("Warning", "Traceback", str(ledger_runs.metrics_dir), "/evalkit/", ".py:"):
            assert raw not in text, (run.study, raw)
        assert not re.search(r"\bNaN\b", text), run.study


@pytest.fixture(scope="module")
def april(run_ledger: Callable[[str], LedgerRuns]) -> LedgerRuns:
    return run_ledger("ledger-2026-04-13")


@pytest.mark.notebook
def test_april_threshold_study_has_no_fire_rate_for_an_unmeasured_guard_count(
    april: LedgerRuns,
) -> None:
    res = april.threshold.results
    assert res["unmeasured"]["unmeasured"] == 10 and res["value_sources"] == {"unmeasured": 10}
    assert res["threshold_study"]["n_items"] == 0  # no record enters the curve
    for row in res["counterfactual_detail"]:
        assert row["record fire rate [95% cluster-bootstrap CI]"].startswith("no rate")
        assert row["ceiling check (CI vs ceiling)"] == "no finding: no measured record"
    text = _text(april.threshold)
    assert "10 of 10 records unmeasured: guard emission began 2026" in text
    assert "within" not in text and "[0.0%, 0.0%]" not in text
    assert "Nothing to plot: the fire" in text  # no empty axes


@pytest.mark.notebook
def test_april_replay_names_the_events_and_flags_what_fires_for_lack_of_telemetry(
    april: LedgerRuns,
) -> None:
    text = _text(april.replay)
    assert "holds: 47 events, all subagent_stop" in text
    assert "no quality_gate event: no gate telemetry" in text
    flags = {
        (f["rubric"], f["signal"]): (f["flag"], f["cause"])
        for f in april.replay.results["instruments"]["flags"]
    }
    assert flags[("rubric-v2", "fact changes_unverified")] == (
        LACK,
        f"true on 10 of 10 records, every one unmeasured: {GATES}",
    )
    assert flags[("rubric-v2", "rule judge: rule 6 → fail")] == (
        LACK,
        "10 of 10 records, every one unmeasured: rule 6 fires on changes_unverified, "
        f"unmeasured: {GATES}",
    )


@pytest.mark.notebook
def test_april_monitor_page_names_its_data_and_why_each_band_has_no_session(
    april: LedgerRuns,
) -> None:
    text = _text(april.monitor)
    assert "Data card." in text and "holds: 47 events, all subagent_stop" in text
    assert "the data are the synthetic preset" not in text  # the card says what they are
    assert april.monitor.results["data_card"]["synthetic_preset"] is None
    # the states table carries each unmeasured count's cause, not the count alone
    assert GATES in text and GUARDS in text
    assert "Pre-registered" in text and "Not checked against the pre-registration" not in text


@pytest.mark.browser
@pytest.mark.notebook
def test_april_pages_in_chromium_hold_no_raw_warning_and_name_their_data(
    april: LedgerRuns, tmp_path: Path
) -> None:
    with DevTools(chromium(), tmp_path / "profile") as tools:
        seen: dict[str, Any] = {run.study: open_page(tools, run.html) for run in april.pages}
    for page, info in seen.items():
        assert info["failed"] == [] and info["dom"]["errors"] == 0, page
        assert info["dom"]["broken"] == 0, page
        assert_inert(info, page)
        shown = info["dom"]["text"]
        assert "Data card." in shown and "47 events, all subagent_stop" in shown, page
        for raw in ("DegenerateDataWarning", "Traceback", "/evalkit/", str(april.metrics_dir)):
            assert raw not in shown, (page, raw)
        assert info["png"][:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.browser
@pytest.mark.notebook
def test_no_real_ledger_page_reads_nan_none_raw_floats_warnings_or_doubled_text(
    run_ledger: Callable[[str], LedgerRuns], tmp_path: Path
) -> None:
    """Every ledger's three pages, folds opened, hold none of tests/page_scan.py's defects."""
    pages = {
        f"{prefix}/{run.study}": run.html for prefix in PINS for run in run_ledger(prefix).pages
    }
    with DevTools(chromium(), tmp_path / "profile") as tools:
        found = {key: defects(open_page(tools, page, SCAN)["extra"]) for key, page in pages.items()}
    assert len(found) == 3 * len(REAL_LEDGERS)
    assert {k: v for k, v in found.items() if v} == {}
