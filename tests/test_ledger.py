"""Ledger reading: states, byte-level quirks, diagnostics, the rubric-v2 rotated history."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import require_shared
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.errors import EvalkitError
from evalkit.js.timestamps import parse_timestamp
from evalkit.ledger.reader import (
    Diagnostic,
    get_number,
    get_path,
    get_str,
    read_jsonl,
    read_metrics_dir,
)

EV = '{"timestamp":"%s","event":"orchestrator.quality_gate.passed","exit_code":0}'


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# ---------------------------------------------------------------------------- file states


def test_absent_empty_present_are_three_states(tmp_path: Path) -> None:
    assert read_jsonl(tmp_path / "nope.jsonl").state == "absent"
    assert read_jsonl(write(tmp_path / "zero.jsonl", b"")).state == "empty"
    # only blank lines (spaces, CRLF) carry no record either: empty, and no diagnostic
    blank = read_jsonl(write(tmp_path / "blank.jsonl", "\n  \r\n\t\n"))
    assert blank.state == "empty" and blank.diagnostics == ()
    present = read_jsonl(write(tmp_path / "one.jsonl", '{"a":1}\n'))
    assert present.state == "present" and present.values == ({"a": 1},)


def test_a_folder_where_a_file_should_be_is_unreadable_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").mkdir()
    f = read_jsonl(tmp_path / "events.jsonl")
    assert f.state == "unreadable" and f.error
    assert f.values == () and len(f.diagnostics) == 1
    assert f.diagnostics[0].line is None


def test_a_named_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "events.jsonl")
    f = read_jsonl(tmp_path / "events.jsonl")
    assert f.state == "unreadable" and "pipe" in (f.error or "")


def test_metrics_dir_missing_reads_as_absent_files(tmp_path: Path) -> None:
    ledger = read_metrics_dir(tmp_path / "missing")
    assert ledger.sessions.state == "absent" and ledger.events.state == "absent"
    assert ledger.event_sources == () and ledger.events_v2 == ()
    assert "not found" in ledger.diagnostics[0].reason
    with pytest.raises(EvalkitError, match="missing"):
        read_metrics_dir(tmp_path / "missing", strict=True)


# ---------------------------------------------------------------------------- line quirks


def test_malformed_lines_are_named_by_file_and_line(tmp_path: Path) -> None:
    p = write(tmp_path / "s.jsonl", '{"session_id": "broken\n{"a":1}\n\nnot json at all\n')
    f = read_jsonl(p)
    assert f.values == ({"a": 1},)
    assert f.malformed_lines == (1, 4)  # the blank line 3 keeps its number but is not a record
    assert [(d.file, d.line) for d in f.diagnostics] == [(str(p), 1), (str(p), 4)]
    assert all("malformed" in d.reason for d in f.diagnostics)


def test_bom_is_trimmed_for_sessions_but_unreadable_for_events(tmp_path: Path) -> None:
    # readCanonicalSessions parses line.trim() (trim removes U+FEFF); both event readers
    # parse the raw line and JSON.parse rejects a BOM (v1 skips it, v2 counts it).
    p = write(tmp_path / "e.jsonl", "\ufeff" + EV % "2026-09-19T08:00:00.000Z" + "\n" + "[1]\n")
    f = read_jsonl(p)
    assert len(f.values) == 2 and len(f.objects) == 1
    assert f.raw_values == ([1],)
    assert f.event_records == ()
    assert f.unreadable_lines == (1, 2)
    assert "BOM" in f.diagnostics[0].reason


def test_bom_line_in_the_metrics_dir(tmp_path: Path) -> None:
    bom = "\ufeff"
    write(tmp_path / "sessions.jsonl", bom + '{"session_id":"s1"}\n')
    write(tmp_path / "events.jsonl", bom + EV % "2026-09-19T08:00:00.000Z" + "\n")
    ledger = read_metrics_dir(tmp_path)
    assert ledger.sessions.objects == ({"session_id": "s1"},)
    assert ledger.events_v1 == () and ledger.events_v2 == ()
    assert ledger.unreadable_event_lines == 1


def test_crlf_lines_parse_under_every_reading(tmp_path: Path) -> None:
    p = write(tmp_path / "e.jsonl", (EV % "2026-09-19T08:00:00.000Z") + "\r\n" + '{"b":2}\r\n')
    f = read_jsonl(p)
    assert len(f.event_records) == 2 and f.unreadable_count == 0 and f.diagnostics == ()


def test_non_object_lines_are_kept_as_values_but_not_as_v2_records(tmp_path: Path) -> None:
    p = write(tmp_path / "e.jsonl", '[1,2,3]\n"text"\n42\nnull\n{"a":1}\n')
    f = read_jsonl(p)
    assert f.values == ([1, 2, 3], "text", 42, None, {"a": 1})
    assert f.raw_values == f.values  # rubric-v1 keeps them
    assert f.objects == ({"a": 1},)
    assert f.event_records == ({"a": 1},)
    assert f.unreadable_lines == (1, 2, 3, 4)  # rubric-v2 counts them unreadable
    assert [d.line for d in f.diagnostics] == [1, 2, 3, 4]


def test_invalid_utf8_is_replaced_like_node_and_named(tmp_path: Path) -> None:
    good = b'{"event":"x","note":"caf\xff"}'  # a bad byte inside a string still parses
    bad = b'\xfe\xff{"a":1}'  # bad bytes outside a string make the line malformed
    f = read_jsonl(write(tmp_path / "e.jsonl", good + b"\n" + bad + b"\n"))
    assert f.values == ({"event": "x", "note": "caf\ufffd"},)
    lines = {(d.line, d.reason.split(" ")[0]) for d in f.diagnostics}
    assert (1, "invalid") in lines and (2, "invalid") in lines and (2, "malformed") in lines


def test_numbers_follow_json_parse(tmp_path: Path) -> None:
    p = write(tmp_path / "s.jsonl", '{"x":1e400,"y":1.0,"z":NaN}\n{"x":1e400,"y":1.0}\n')
    f = read_jsonl(p)
    assert f.malformed_lines == (1,)  # NaN is not JSON
    (rec,) = f.values
    assert rec["y"] == 1 and isinstance(rec["y"], int)
    assert get_number(rec, "x") is None  # Infinity: not a finite number, so unknown


def test_duplicate_keys_last_wins(tmp_path: Path) -> None:
    f = read_jsonl(write(tmp_path / "s.jsonl", '{"session_id":"a","session_id":"b"}\n'))
    assert f.values == ({"session_id": "b"},)


# ---------------------------------------------------------------------------- field helpers


def test_get_number_and_get_str_never_guess() -> None:
    rec = {
        "a": 3,
        "b": "3",
        "c": True,
        "d": None,
        "e": {"completion_rate": 0.5, "planned": [1, 2]},
        "f": float("nan"),
        "g": [1],
    }
    assert get_number(rec, "a") == 3
    assert get_number(rec, "b") is None  # a string where a number belongs
    assert get_number(rec, "c") is None  # booleans are not numbers
    assert get_number(rec, "d") is None
    assert get_number(rec, "missing") is None  # missing is unknown, never 0
    assert get_number(rec, "e", "completion_rate") == 0.5
    assert get_number(rec, "e", "planned") is None
    assert get_number(rec, "f") is None
    assert get_number(rec, "g", "0") is None  # arrays are not walked
    assert get_number("not a dict", "a") is None
    assert get_str(rec, "b") == "3" and get_str(rec, "a") is None
    assert get_path(rec, "e", "completion_rate") == 0.5 and get_path(rec, "x", "y") is None


# ---------------------------------------------------------------------------- the metrics dir


def test_v1_reads_the_active_file_only_v2_the_history(tmp_path: Path) -> None:
    write(tmp_path / "sessions.jsonl", '{"session_id":"s1"}\n')
    write(tmp_path / "events.jsonl", EV % "2026-09-19T10:00:00.000Z" + "\n")
    write(
        tmp_path / "_archive" / "events-20260918T000000Z_20260918T230000Z.jsonl",
        EV % "2026-09-18T12:00:00.000Z" + "\n",
    )
    ledger = read_metrics_dir(tmp_path)
    assert [e["timestamp"] for e in ledger.events_v1] == ["2026-09-19T10:00:00.000Z"]
    assert [e["timestamp"] for e in ledger.events_v2] == [
        "2026-09-18T12:00:00.000Z",
        "2026-09-19T10:00:00.000Z",
    ]
    assert ledger.events_complete and ledger.diagnostics == ()


def test_archive_names_must_have_the_exact_shape(tmp_path: Path) -> None:
    arch = tmp_path / "_archive"
    line = EV % "2026-09-18T12:00:00.000Z" + "\n"
    accepted = [
        "events-20260918T000000Z_20260918T230000Z.jsonl",
        "events-unknown_20260918T230000Z.jsonl",  # first stamp may be unknown
        "events-20260918T000000Z_20260918T230000Z-2.jsonl",  # collision suffix
    ]
    ignored = [
        "events-worktree-vault-session-analysis-2026-09-18.jsonl",  # hand-placed file
        "events-20260918_20260918.jsonl",  # stamps without time
        "events-20260918T000000Z_unknown.jsonl",  # only the first may be unknown
        "events-20260918T000000Z_20260918T230000Z.jsonl.bak",
        "Events-20260918T000000Z_20260918T230000Z.jsonl",
        "events-20260918T000000Z_20260918T230000Z-x.jsonl",
    ]
    for name in accepted + ignored:
        write(arch / name, line)
    ledger = read_metrics_dir(tmp_path)
    assert sorted(Path(s.path).name for s in ledger.event_sources) == sorted(accepted)


def test_sources_ordered_by_earliest_timestamp_undatable_last_ties_by_path(tmp_path: Path) -> None:
    arch = tmp_path / "_archive"
    # file names deliberately disagree with content: order is by measured time, not name
    write(
        arch / "events-20260101T000000Z_20260101T000000Z.jsonl", EV % "2026-09-17T00:00:00Z" + "\n"
    )
    write(
        arch / "events-20250101T000000Z_20250101T000000Z.jsonl", EV % "2026-09-17T00:00:00Z" + "\n"
    )
    write(tmp_path / "events.jsonl.1", EV % "2026-09-16T00:00:00.000Z" + "\n")
    # only non-strict timestamps (offset form) -> undatable, sorts after every dated source
    write(tmp_path / "events.jsonl.2", EV % "2026-01-01T00:00:00+02:00" + "\n")
    write(tmp_path / "events.jsonl", EV % "2026-09-19T00:00:00.000Z" + "\n")
    ledger = read_metrics_dir(tmp_path)
    names = [os.path.relpath(s.path, tmp_path) for s in ledger.event_sources]
    assert names == [
        "events.jsonl.1",
        os.path.join("_archive", "events-20250101T000000Z_20250101T000000Z.jsonl"),  # tie: path
        os.path.join("_archive", "events-20260101T000000Z_20260101T000000Z.jsonl"),
        "events.jsonl",
        "events.jsonl.2",
    ]
    assert ledger.gaps == ()  # ring slots 1 and 2 both present


def test_earliest_timestamp_not_first_line_dates_a_source(tmp_path: Path) -> None:
    arch = tmp_path / "_archive"
    write(
        arch / "events-20260101T000000Z_20260101T000000Z.jsonl",
        EV % "2026-09-20T00:00:00.000Z" + "\n" + EV % "2026-09-10T00:00:00.000Z" + "\n",
    )
    write(tmp_path / "events.jsonl", EV % "2026-09-15T00:00:00.000Z" + "\n")
    ledger = read_metrics_dir(tmp_path)
    assert Path(ledger.event_sources[0].path).parent.name == "_archive"
    # lines keep file order within a source
    assert [e["timestamp"][:10] for e in ledger.events_v2] == [
        "2026-09-20",
        "2026-09-10",
        "2026-09-15",
    ]


def test_missing_archive_named_by_a_tombstone_is_a_gap(tmp_path: Path) -> None:
    arch = tmp_path / "_archive"
    kept = arch / "events-20260917T000000Z_20260917T230000Z.jsonl"
    write(kept, EV % "2026-09-17T01:00:00.000Z" + "\n")
    gone = str(arch / "events-20260918T000000Z_20260918T230000Z.jsonl")
    tomb = '{"timestamp":"2026-09-19T00:00:00.000Z","event":"orchestrator.events.rotated","archived_as":%s}'
    write(
        tmp_path / "events.jsonl",
        "\n".join([tomb % json.dumps(gone), tomb % json.dumps(str(kept)), tomb % '""']) + "\n",
    )
    ledger = read_metrics_dir(tmp_path)
    assert ledger.rotation_gaps == (gone,)
    (gap,) = ledger.gaps
    assert gap.kind == "missing-archive" and gap.reported_by == str(tmp_path / "events.jsonl")
    assert not ledger.events_complete
    assert any("not on disk" in d.reason for d in ledger.diagnostics)


def test_relative_archived_as_resolves_against_the_metrics_dir(tmp_path: Path) -> None:
    name = "events-20260917T000000Z_20260917T230000Z.jsonl"
    write(tmp_path / "_archive" / name, EV % "2026-09-17T01:00:00.000Z" + "\n")
    tomb = '{"timestamp":"2026-09-19T00:00:00.000Z","event":"orchestrator.events.rotated","archived_as":"%s"}'
    write(
        tmp_path / "events.jsonl",
        (tomb % f"_archive/{name}") + "\n" + (tomb % "_archive/gone.jsonl") + "\n",
    )
    assert read_metrics_dir(tmp_path).rotation_gaps == ("_archive/gone.jsonl",)


def test_legacy_ring_hole_is_a_gap(tmp_path: Path) -> None:
    write(tmp_path / "events.jsonl", EV % "2026-09-19T00:00:00.000Z" + "\n")
    write(tmp_path / "events.jsonl.1", EV % "2026-09-18T00:00:00.000Z" + "\n")
    write(tmp_path / "events.jsonl.3", EV % "2026-09-16T00:00:00.000Z" + "\n")
    ledger = read_metrics_dir(tmp_path)
    assert [(g.kind, Path(g.archived_as).name) for g in ledger.gaps] == [
        ("ring-hole", "events.jsonl.2")
    ]
    assert len(ledger.event_sources) == 3


def test_unreadable_archive_is_a_gap_not_a_crash(tmp_path: Path) -> None:
    write(tmp_path / "events.jsonl", EV % "2026-09-19T00:00:00.000Z" + "\n")
    (tmp_path / "_archive" / "events-20260917T000000Z_20260917T230000Z.jsonl").mkdir(parents=True)
    ledger = read_metrics_dir(tmp_path)
    assert [g.kind for g in ledger.gaps] == ["unreadable-source"]
    assert len(ledger.events_v2) == 1
    # the folder is named once, by its own diagnostic
    assert sum("cannot read" in d.reason for d in ledger.diagnostics) == 1


def test_active_events_folder_is_unreadable_for_both_rubrics(tmp_path: Path) -> None:
    write(tmp_path / "sessions.jsonl", '{"session_id":"s1"}\n')
    (tmp_path / "events.jsonl").mkdir()
    ledger = read_metrics_dir(tmp_path)
    assert ledger.events.state == "unreadable"
    assert ledger.events_v1 == () and ledger.events_v2 == ()
    assert [g.kind for g in ledger.gaps] == ["unreadable-source"]


def test_unreadable_event_lines_are_counted_across_sources(tmp_path: Path) -> None:
    write(tmp_path / "events.jsonl", EV % "2026-09-19T00:00:00.000Z" + "\n[1]\n{oops\n")
    write(
        tmp_path / "_archive" / "events-20260917T000000Z_20260917T230000Z.jsonl",
        EV % "2026-09-17T00:00:00.000Z" + '\n"str"\n',
    )
    ledger = read_metrics_dir(tmp_path)
    assert ledger.unreadable_event_lines == 3
    refs = [(Path(p).name, n) for p, n in ledger.unreadable_event_refs]
    assert refs == [
        ("events-20260917T000000Z_20260917T230000Z.jsonl", 2),
        ("events.jsonl", 2),
        ("events.jsonl", 3),
    ]


def test_strict_raises_naming_file_and_line(tmp_path: Path) -> None:
    write(tmp_path / "sessions.jsonl", '{"session_id":"s1"}\n{bad\n')
    lenient = read_metrics_dir(tmp_path)
    assert lenient.diagnostics == (
        Diagnostic(str(tmp_path / "sessions.jsonl"), 2, lenient.diagnostics[0].reason),
    )
    with pytest.raises(
        EvalkitError, match=re.escape(f"{tmp_path / 'sessions.jsonl'}:2: malformed")
    ):
        read_metrics_dir(tmp_path, strict=True)


def test_clean_ledger_is_strict_clean(tmp_path: Path) -> None:
    write(tmp_path / "sessions.jsonl", '{"session_id":"s1"}\n')
    write(tmp_path / "events.jsonl", b"")
    ledger = read_metrics_dir(tmp_path, strict=True)
    assert ledger.events.state == "empty" and ledger.events_v2 == ()


# ---------------------------------------------------------------------------- byte-level vectors


def _case_dirs() -> list[Path]:
    root = require_shared("conformance")
    return sorted(p for p in root.glob("*/*") if (p / "expected-v2.json").exists())


def test_unreadable_counts_match_every_reference_ledger_note() -> None:
    # v2 evidence appends "LEDGER INCOMPLETE: N unreadable line(s)" exactly when lines were
    # unreadable; our count must equal N in every case (0 when the note is absent).
    checked = 0
    for case in _case_dirs():
        expected = json.loads((case / "expected-v2.json").read_text(encoding="utf-8"))
        if not expected.get("record"):
            continue
        notes = {
            int(m.group(1))
            for dim in expected["record"]["dimensions"]
            for m in [re.search(r"LEDGER INCOMPLETE: (\d+) unreadable line", dim["evidence"])]
            if m
        }
        assert len(notes) <= 1
        want = notes.pop() if notes else 0
        assert read_metrics_dir(case).unreadable_event_lines == want, case.name
        checked += 1
    assert checked >= 60


def test_malformed_case_is_read_as_the_reference_reads_it() -> None:
    case = require_shared("conformance", "public", "parse-malformed-lines")
    ledger = read_metrics_dir(case)
    assert ledger.sessions.malformed_lines == (1, 3)
    assert [r["session_id"] for r in ledger.sessions.objects] == ["main-2026-09-19-session-1"]
    assert len(ledger.events_v2) == 3
    assert ledger.events.unreadable_lines == (4, 5)  # a torn object and an array


def test_empty_and_absent_event_files_in_the_vectors() -> None:
    empty = read_metrics_dir(require_shared("conformance", "public", "ps-events-file-empty"))
    absent = read_metrics_dir(require_shared("conformance", "public", "ps-events-file-absent"))
    no_sessions = read_metrics_dir(
        require_shared("conformance", "public", "res-sessions-file-empty")
    )
    assert (empty.events.state, absent.events.state) == ("empty", "absent")
    assert empty.events_v2 == () and absent.events_v2 == ()
    assert no_sessions.sessions.state == "empty" and no_sessions.sessions.values == ()


# ---------------------------------------------------------------------------- source dating

# Few values per field, so lists often share a date-time and differ only in the fraction.
_STRICTISH = st.builds(
    lambda y, mo, d, h, mi, s, frac, z: f"{y}-{mo}-{d}T{h}:{mi}:{s}{frac}{z}",
    st.sampled_from(["2026", "9999"]),
    st.sampled_from(["02", "12", "13"]),
    st.sampled_from(["28", "30", "31", "32"]),  # day overflow included
    st.sampled_from(["23", "24", "25"]),  # 24:00 is next day's midnight
    st.sampled_from(["00", "59"]),
    st.sampled_from(["00", "59"]),
    st.sampled_from(["", ".5", ".12", ".999", ".0001"]),
    st.sampled_from(["Z", "Z", "z"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_STRICTISH, st.just(None), st.integers()), max_size=12))
@pytest.mark.slow
def test_earliest_timestamp_shortcut_equals_brute_force(stamps: list[object]) -> None:
    # The reader skips strings that sort after the best so far; a brute-force minimum over
    # every parse must give the same instant, overflowing days and 24:00 included.
    from evalkit.js.timestamps import parse_iso_z
    from evalkit.ledger.reader import _earliest_iso_z

    parsed = [ms for ms in (parse_iso_z(s) for s in stamps) if ms is not None]
    assert _earliest_iso_z(stamps) == (min(parsed) if parsed else None)


def test_earliest_timestamp_after_year_10000() -> None:
    from evalkit.ledger.reader import _earliest_iso_z

    # 9999-12-31T24:00 is year 10000, whose ISO form is "+010000-...": no shortcut from it
    stamps = ["9999-12-31T24:00:00Z", "2026-09-19T08:00:00Z", "2026-09-19T07:00:00Z"]
    assert _earliest_iso_z(stamps) == parse_timestamp("2026-09-19T07:00:00Z")
    # same second, the fraction decides even when the bare form sorts after it as text
    assert _earliest_iso_z(["2026-09-19T08:00:00.500Z", "2026-09-19T08:00:00Z"]) == parse_timestamp(
        "2026-09-19T08:00:00Z"
    )


def test_parse_iso_z_is_date_parse_on_the_strict_form() -> None:
    from evalkit.js.timestamps import parse_iso_z, parse_timestamp

    assert parse_iso_z("2026-09-19T08:00:00.123Z") == parse_timestamp("2026-09-19T08:00:00.123Z")
    assert parse_iso_z("2026-09-19T24:00:00Z") == parse_timestamp("2026-09-20T00:00:00Z")
    assert parse_iso_z("2026-02-30T00:00:00Z") == parse_timestamp("2026-03-02T00:00:00Z")
    for not_strict in ("2026-09-19T08:00:00.1234Z", "2026-09-19T08:00:00z", "2026-09-19T08:00Z"):
        assert parse_timestamp(not_strict) is not None and parse_iso_z(not_strict) is None
    assert parse_iso_z("2026-09-19T24:30:00Z") is None and parse_iso_z(20260919) is None
