"""Property tests: bad ledgers never crash the reader or the scorer, and missing data is never
turned into a verdict.

Ledgers are generated line by line from raw JSON tokens, so a field can hold a string where a
number belongs, an array where an object belongs, ``NaN``/``Infinity`` (invalid JSON, as the
reference's ``JSON.parse`` sees it), ``1e400`` (valid JSON, Infinity as a number), a huge
integer, an unparseable timestamp, or be missing; lines can be torn, binary, BOM-prefixed or
CRLF-terminated.
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evalkit.errors import EvalkitError
from evalkit.js.numbers import JSONLineError, format_js_number, is_js_number, loads_json_line
from evalkit.js.timestamps import MAX_TIME_MS, format_iso, parse_timestamp
from evalkit.ledger.reader import read_jsonl, read_metrics_dir

STATUSES = {"pass", "fail", "not-applicable", "cannot-determine"}
KPI_KEYS = (
    "duration_seconds",
    "total_waves",
    "total_agents",
    "token_input",
    "token_output",
    "carryover",
)
RUBRICS = ("rubric-v1", "rubric-v2")
FIXED_TS = "2026-10-01T00:00:00.000Z"

# derandomize: the same examples on every run, so CI is reproducible (and fast to re-run)
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ------------------------------------------------------------------------------ raw JSON tokens

# Values JSON.parse reads but that are no usable number, or that it rejects outright.
WEIRD = st.sampled_from(
    [
        "1e400",  # valid JSON, Infinity in JS
        "-1e400",
        "12345678901234567890",  # beyond 2**53
        "NaN",  # invalid JSON: the whole line becomes unreadable
        "Infinity",
        "-Infinity",
        "-0",
        "null",
        "true",
        "false",
        "[]",
        "[1,2]",
        "{}",
        '{"a":1}',
        '"3"',
        '""',
        '"  "',
    ]
)
NUMBER = st.one_of(
    st.integers(-3, 40).map(str),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(json.dumps),
    st.sampled_from(["0", "0.8", "0.79", "1", "1.0", "7200"]),
)
TIMESTAMPS = st.sampled_from(
    [
        "2026-09-19T08:00:00.000Z",
        "2026-09-19T08:30:00Z",
        "2026-09-19T09:00:00.000Z",
        "2026-09-19T09:50:00.000Z",
        "2026-09-19T10:00:00.000Z",
        "2026-09-19T12:00:00.000+02:00",
        "2026-09-19T11:00:00",
        "2026-09-19",
        "Sat, 19 Sep 2026 09:00:00 GMT",
        "2026-09-19T24:00:00Z",
        # unknown ones
        "not-a-time",
        "",
        " 2026-09-19T08:00:00Z",
        "2026-9-19T08:00:00Z",
        "2026-09-19T08Z",
        "2026-09-19T08:00:00+00",
    ]
)
TS_TOKEN = st.one_of(TIMESTAMPS.map(json.dumps), NUMBER, WEIRD)
NUM_TOKEN = st.one_of(NUMBER, NUMBER, WEIRD)
SESSION_IDS = ["s-1", "s-2", "s-3", "main-2026-09-19-session-1", "  ", ""]
STATUS_TOKEN = st.one_of(
    st.sampled_from(["completed", "abandoned", "other"]).map(json.dumps), WEIRD
)
WAVES_TOKEN = st.one_of(
    st.sampled_from(
        [
            "[]",
            '[{"wave":1,"role":"Impl-Core"}]',
            '[{"wave":1,"role":"Coordinator","coordinator_direct":true}]',
            '[{"role":"Housekeeping","coordinator_direct":true}]',
            "[1,2]",
        ]
    ),
    WEIRD,
)
EVENT_NAMES = [
    "orchestrator.quality_gate.passed",
    "orchestrator.quality_gate.failed",
    "orchestrator.destructive_guard.blocked",
    "orchestrator.destructive_guard.warned",
    "orchestrator.loop.warning",
    "orchestrator.session.started",
    "orchestrator.events.rotated",
    "something.else",
]


def obj(
    fields: dict[str, st.SearchStrategy[str]], required: tuple[str, ...] = ()
) -> st.SearchStrategy[str]:
    """A JSON object text whose fields (but ``required``) are optional and hold raw tokens."""
    optional = {k: v if k in required else st.one_of(st.none(), v) for k, v in fields.items()}
    return st.fixed_dictionaries(optional).map(
        lambda d: (
            "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in d.items() if v is not None) + "}"
        )
    )


def session_line(
    session_id: st.SearchStrategy[str], *, id_required: bool = False
) -> st.SearchStrategy[str]:
    return obj(
        {
            "session_id": session_id,
            "status": STATUS_TOKEN,
            "started_at": TS_TOKEN,
            "completed_at": TS_TOKEN,
            "total_files_changed": NUM_TOKEN,
            "total_waves": NUM_TOKEN,
            "total_agents": NUM_TOKEN,
            "duration_seconds": NUM_TOKEN,
            "waves": WAVES_TOKEN,
            "agent_summary": st.one_of(obj({"complete": NUM_TOKEN, "spiral": NUM_TOKEN}), WEIRD),
            "effectiveness": st.one_of(
                obj(
                    {
                        "completion_rate": NUM_TOKEN,
                        "planned_issues": NUM_TOKEN,
                        "carryover": NUM_TOKEN,
                        "carryover_ratio": NUM_TOKEN,
                    }
                ),
                WEIRD,
            ),
            "total_token_input": NUM_TOKEN,
            "total_token_output": NUM_TOKEN,
            "_backfill_source": st.sampled_from(['"backfill"', '"repair-invalid-sessions/1"']),
            "supersedes": st.sampled_from(SESSION_IDS).map(json.dumps),
            "raw_session_id": st.sampled_from(['"raw-a"', '"raw-b"']),
            "_synthetic_session_id": st.sampled_from(["true", "false"]),
        },
        required=("session_id",) if id_required else (),
    )


EVENT_LINE = obj(
    {
        "timestamp": TS_TOKEN,
        "event": st.one_of(st.sampled_from(EVENT_NAMES).map(json.dumps), WEIRD),
        "variant": st.sampled_from(['"full-gate"', '"baseline"', '"incremental"', "null", "3"]),
        "exit_code": NUM_TOKEN,
        "session_id": st.sampled_from(['"raw-a"', '"raw-b"', '"s-1"', "1"]),
        "semantic_session_id": st.sampled_from(SESSION_IDS).map(json.dumps),
        "archived_as": st.sampled_from(
            ['"/nowhere/events-x.jsonl"', '"_archive/gone.jsonl"', '""']
        ),
    }
)
GARBAGE = st.one_of(
    st.text(max_size=40),
    st.sampled_from(['{"session_id": "broken', "[1,2,3]", '"text"', "42", "null", "{oops", "}{"]),
)
RAW_BYTES = st.binary(max_size=40)


def jsonl(line: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """A file: mostly well-formed lines, some garbage, optional BOM, LF or CRLF, raw bytes."""
    text_line = st.one_of(line, line, line, GARBAGE).map(
        lambda s: s.encode("utf-8", "surrogatepass")
    )
    any_line = st.one_of(
        text_line, text_line, text_line, RAW_BYTES.filter(lambda b: b"\n" not in b)
    )
    return st.tuples(
        st.lists(any_line, max_size=6),
        st.sampled_from([b"\n", b"\r\n"]),
        st.booleans(),
        st.booleans(),
    ).map(lambda t: (b"\xef\xbb\xbf" if t[2] else b"") + t[1].join(t[0]) + (t[1] if t[3] else b""))


DIR = b"<a folder where the file should be>"
MAYBE_FILE = st.one_of(
    st.none(),
    st.just(b""),
    st.just(DIR),
    jsonl(session_line(st.sampled_from(SESSION_IDS).map(json.dumps))),
)
EVENTS_FILE = st.one_of(st.none(), st.just(b""), jsonl(EVENT_LINE))
TOMBSTONE = st.sampled_from(
    ["events-20260918T000000Z_20260918T230000Z.jsonl", "events-unknown_20260917T000000Z.jsonl"]
)
LEDGER = st.fixed_dictionaries(
    {
        "sessions.jsonl": MAYBE_FILE,
        "events.jsonl": st.one_of(EVENTS_FILE, st.just(DIR)),
        "events.jsonl.2": st.one_of(st.none(), jsonl(EVENT_LINE)),
        "_archive/events-20260918T000000Z_20260918T230000Z.jsonl": st.one_of(
            st.none(), st.just(DIR), jsonl(EVENT_LINE)
        ),
        "_archive/not-an-archive.jsonl": st.one_of(st.none(), jsonl(EVENT_LINE)),
        # a rotation tombstone naming an archive that may or may not be there
        "tombstone": st.one_of(st.none(), TOMBSTONE.map(str.encode)),
    }
)


def materialise(root: Path, files: dict[str, bytes | None]) -> Path:
    for name, data in files.items():
        if data is None or name == "tombstone":
            continue
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if data == DIR:
            path.mkdir(exist_ok=True)
        else:
            path.write_bytes(data)
    tomb = files.get("tombstone")
    active = root / "events.jsonl"
    if tomb is not None and not active.is_dir():
        line = {
            "timestamp": "2026-09-19T00:00:00.000Z",
            "event": "orchestrator.events.rotated",
            "archived_as": str(root / "_archive" / tomb.decode()),
        }
        with active.open("ab") as fh:
            fh.write(b"\n" + json.dumps(line).encode() + b"\n")
    return root


def with_ledger(files: dict[str, bytes | None], check: Callable[[Path], None]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        check(materialise(Path(tmp), files))


# ------------------------------------------------------------------------------ reading layer


@SETTINGS
@given(LEDGER)
@pytest.mark.slow
def test_reader_never_raises_and_accounts_for_every_line(files: dict[str, bytes | None]) -> None:
    def check(root: Path) -> None:
        ledger = read_metrics_dir(root)
        for src in (ledger.sessions, *ledger.event_sources):
            numbers = [ln.line_no for ln in src.lines]
            assert numbers == sorted(set(numbers))
            # every non-blank line is either an event record or counted unreadable
            assert len(src.event_records) + src.unreadable_count == len(src.lines)
            assert src.state in {"absent", "empty", "present", "unreadable"}
            assert (src.state == "present") == bool(src.lines)
        assert all(isinstance(e, dict) for e in ledger.events_v2)
        # rubric-v1 keeps every raw-parseable line of the active file, objects included
        assert len(ledger.events_v1) == len(ledger.events.event_records) + sum(
            1 for ln in ledger.events.lines if ln.ok and not ln.padded and not ln.is_object
        )
        for d in ledger.diagnostics:
            assert d.file and d.reason
            assert d.line is None or d.line >= 1
        # the hand-placed file in _archive/ is never part of the ledger
        assert all("not-an-archive" not in s.path for s in ledger.event_sources)
        if ledger.diagnostics:
            with pytest.raises(EvalkitError):
                read_metrics_dir(root, strict=True)
        else:
            read_metrics_dir(root, strict=True)

    with_ledger(files, check)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
@pytest.mark.slow
def test_read_jsonl_survives_arbitrary_bytes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.jsonl"
        path.write_bytes(data)
        f = read_jsonl(path)
        assert f.state in {"empty", "present"}
        assert len(f.malformed_lines) <= len(f.lines)


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(max_size=40), TIMESTAMPS, st.from_regex(r"[0-9+\-: TtZz.]{0,30}", fullmatch=True)
    )
)
@pytest.mark.slow
def test_parse_timestamp_is_total(text: str) -> None:
    ms = parse_timestamp(text)
    if ms is not None:
        assert math.isfinite(ms) and ms == int(ms) and abs(ms) <= MAX_TIME_MS
        assert parse_timestamp(format_iso(ms)) == ms


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60))
@pytest.mark.slow
def test_loads_json_line_raises_only_its_own_error(text: str) -> None:
    with contextlib.suppress(JSONLineError):
        loads_json_line(text)


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
@pytest.mark.slow
def test_js_number_text_round_trips(x: float) -> None:
    # String(x) is a shortest round-trip form: Number(String(x)) === x (up to -0)
    assert float(format_js_number(x)) == x


# ------------------------------------------------------------------------------ scoring layer


def _check_record(record: dict[str, Any]) -> None:
    for dim in record["dimensions"]:
        assert dim["status"] in STATUSES, dim
        score = dim.get("score")
        assert score is None or (isinstance(score, (int, float)) and math.isfinite(score))
    assert set(record["kpis"]) == set(KPI_KEYS)
    for key, value in record["kpis"].items():
        assert value is None or (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value >= 0
        ), (key, value)


NEGATIVE_KPIS = {
    "sessions.jsonl": (
        b'{"session_id":"s-1","status":"completed","started_at":"2026-09-19T08:00:00.000Z",'
        b'"completed_at":"2026-09-19T10:00:00.000Z","total_waves":-3,"total_agents":-1,'
        b'"total_token_input":-5,"duration_seconds":-7200,"effectiveness":{"carryover":-2}}\n'
    ),
    "events.jsonl": b'{"timestamp":"2026-09-19T09:00:00.000Z","event":["a list"],"exit_code":0}\n',
}


@SETTINGS
@given(LEDGER)
# a negative count is not a KPI (SPEC 2: finite non-negative or null); an unhashable event name
@example(NEGATIVE_KPIS)
@pytest.mark.slow
def test_scoring_never_crashes_and_statuses_are_the_four(files: dict[str, bytes | None]) -> None:
    from evalkit import score_ledger, score_session

    def check(root: Path) -> None:
        for rubric in RUBRICS:
            frame = score_ledger(root, rubric)
            assert set(frame["status"]) <= STATUSES
            for score in frame["score"]:
                assert score is None or (isinstance(score, (int, float)) and math.isfinite(score))
            try:
                record = score_session(root, None, rubric, timestamp=FIXED_TS).to_dict()
            except EvalkitError:
                pass  # no session resolves, or only-whitespace id: a clear error, not a crash
            else:
                _check_record(record)
            # the batch path scores each session exactly as the one-at-a-time path
            for sid in list(dict.fromkeys(frame["session_id"]))[:2]:
                one = score_session(root, sid, rubric, timestamp=FIXED_TS).to_dict()
                _check_record(one)
                rows = frame[frame["session_id"] == sid]
                assert [d["status"] for d in one["dimensions"]] == list(rows["status"])
                assert [d["evidence"] for d in one["dimensions"]] == list(rows["evidence"])

    with_ledger(files, check)


# One session per id (no duplicate records), so the record a verdict came from is known.
UNIQUE_SESSIONS = st.lists(
    st.sampled_from(["s-1", "s-2", "s-3", "s-4"]), min_size=1, max_size=4, unique=True
).flatmap(
    lambda ids: st.tuples(*[session_line(st.just(json.dumps(i)), id_required=True) for i in ids])
)


@SETTINGS
@given(UNIQUE_SESSIONS, EVENTS_FILE)
@pytest.mark.slow
def test_missing_data_is_never_a_verdict(sessions: tuple[str, ...], events: bytes | None) -> None:
    from evalkit import score_session

    files = {"sessions.jsonl": "\n".join(sessions).encode(), "events.jsonl": events}

    def check(root: Path) -> None:
        by_id: dict[str, Any] = {}
        for line in sessions:
            try:
                value = loads_json_line(line)
            except JSONLineError:
                continue  # an unparseable record is not in the ledger at all
            by_id[value["session_id"]] = value
        for sid, rec in by_id.items():
            for rubric in RUBRICS:
                try:
                    out = score_session(root, sid, rubric, timestamp=FIXED_TS).to_dict()
                except EvalkitError:
                    continue  # e.g. dropped by the canonical reading (stub, superseded)
                dims = {d["id"]: d for d in out["dimensions"]}
                eff = rec.get("effectiveness")
                rate = eff.get("completion_rate") if isinstance(eff, dict) else None
                if not is_js_number(rate):
                    # no completion rate: plan-fidelity is unknown or not applicable, never judged.
                    # (1e400 is a rate, Infinity, which the reference grades; its score is null.)
                    assert dims["plan-fidelity"]["status"] in {"not-applicable", "cannot-determine"}
                    assert dims["plan-fidelity"].get("score") is None
                for field, kpi in (
                    ("total_token_input", "token_input"),
                    ("total_token_output", "token_output"),
                ):
                    if not _finite_number(rec.get(field)):
                        assert out["kpis"][kpi] is None, (field, rec.get(field))
                if not _finite_number(rec.get("total_waves")):
                    assert out["kpis"]["total_waves"] is None
                if not isinstance(eff, dict) or not _finite_number(eff.get("carryover")):
                    assert out["kpis"]["carryover"] is None
                if events is None or not events.strip():
                    # no event ledger: nothing event-derived may pass or fail
                    assert dims["process-safety"]["status"] == "cannot-determine"

    with_ledger(files, check)


def _finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
