"""verify misses nothing: every tampering of a stored record exits 1, each one classified.

Finding 5 of issue 10: ``verify`` exited 0 on evidence reworded with the same numbers, reversed
dimension order, a changed model/harness/engine_commit/handle/anonymized, extra keys, a run id
that does not match its session and timestamp, and duplicate copies that differ. The edits
below are made as a forger who also recomputes the record's seal would make them (``_rewrite``
reseals by default), so they show what re-scoring alone catches.

The walks at the end change or delete every field of a stored record: without a recomputed
seal every single change exits 1 (the seal binds the run inputs too); with the seal recomputed,
exactly the run inputs verify documents it cannot re-derive (``evalkit.verify.rescore.CLAIMS``) and the
keys SPEC section 2 gives a default pass: the seal is not a signature.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT, require_shared
from record_factory import JUDGE_DIM, TIMESTAMP

import evalkit
from evalkit.cli.main import main
from evalkit.journal import reader as journal
from evalkit.record.contract import make_run_id
from evalkit.record.seal import seal_record
from evalkit.verify.diff import DEFAULTED_KEYS
from evalkit.verify.rescore import CLAIMS, DriftKind, verify_record

Record = dict[str, Any]


@pytest.fixture
def metrics(tmp_path: Path) -> Path:
    target = tmp_path / "metrics"
    shutil.copytree(require_shared("conformance", "public", "random-20260919-002"), target)
    return target


def _store(metrics: Path, **extra: Any) -> Record:
    rec = evalkit.score_session(
        metrics,
        timestamp=TIMESTAMP,
        model_id="claude-test-model",
        model_source="config",
        handle="tester",
    ).to_dict()
    rec.update(extra)
    return journal.append(metrics / "eval.jsonl", rec)


def _rewrite(metrics: Path, change: Callable[[Record], Any], *, reseal: bool = True) -> None:
    """Edit the stored line in place; ``reseal``: recompute its seal, as a forger could."""
    path = metrics / "eval.jsonl"
    rec = json.loads(path.read_text(encoding="utf-8"))
    change(rec)
    path.write_text(json.dumps(seal_record(rec) if reseal else rec) + "\n", encoding="utf-8")


def _dim(rec: Record, dim_id: str) -> Record:
    return next(d for d in rec["dimensions"] if d["id"] == dim_id)


def _verify_cli(metrics: Path, run_id: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["verify", run_id, "--metrics-dir", str(metrics)])
    out, err = capsys.readouterr()
    return code, out + err


def _kinds(metrics: Path, run_id: str) -> set[tuple[str, str, DriftKind]]:
    return {(d.dimension, d.field, d.kind) for d in verify_record(run_id, metrics).drifts}


def test_an_untouched_record_agrees(metrics: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stored = _store(metrics)
    code, out = _verify_cli(metrics, stored["run_id"], capsys)
    assert code == 0, out
    assert out.startswith(f"agreement: {stored['run_id']}: the stored record is what the engine")


def test_pass_iff_reworded_to_fail_iff_is_drift(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = _store(metrics)
    assert "pass iff" in _dim(stored, "plan-fidelity")["evidence"]
    _rewrite(
        metrics,
        lambda r: _dim(r, "plan-fidelity").update(
            evidence=_dim(r, "plan-fidelity")["evidence"].replace("pass iff", "fail iff")
        ),
    )
    code, out = _verify_cli(metrics, stored["run_id"], capsys)
    assert code == 1
    assert out.splitlines()[0].endswith("[evidence-wording]; no verdict changed")
    assert "drift [evidence-wording]: dimension plan-fidelity field evidence: " in out


def test_an_appended_reviewer_note_is_drift(metrics: Path) -> None:
    stored = _store(metrics)
    _rewrite(
        metrics,
        lambda r: _dim(r, "gate-health").update(
            evidence=_dim(r, "gate-health")["evidence"] + " Reviewer note: treat as green."
        ),
    )
    assert _kinds(metrics, stored["run_id"]) == {
        ("gate-health", "evidence", DriftKind.EVIDENCE_WORDING)
    }


def test_reversed_dimension_order_is_drift(metrics: Path) -> None:
    stored = _store(metrics)
    _rewrite(metrics, lambda r: r["dimensions"].reverse())
    assert _kinds(metrics, stored["run_id"]) == {("record", "dimensions (order)", DriftKind.ORDER)}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda r: r["model"].update(id=" claude-test-model"),
            ("record", "model.id", DriftKind.IDENTITY),
        ),
        (lambda r: r["model"].update(vendor="x"), ("record", "model.vendor", DriftKind.EXTRA_KEY)),
        (
            lambda r: r["harness"].update(host_class="tampered-host"),
            ("record", "harness.host_class", DriftKind.IDENTITY),
        ),
        (
            lambda r: r["harness"].update(hostname_hash="deadbeef"),
            ("record", "harness.hostname_hash", DriftKind.IDENTITY),
        ),
        (lambda r: r["harness"].update(os="x"), ("record", "harness.os", DriftKind.EXTRA_KEY)),
        (
            lambda r: r["provenance"].update(engine_commit="f" * 40),
            ("record", "provenance.engine_commit", DriftKind.IDENTITY),
        ),
        (
            lambda r: r["provenance"].update(engine_commit="HEAD"),
            ("record", "provenance.engine_commit", DriftKind.IDENTITY),
        ),
        (
            lambda r: r["provenance"].update(signed_by="x"),
            ("record", "provenance.signed_by", DriftKind.EXTRA_KEY),
        ),
        (lambda r: r.update(handle=None), ("record", "anonymized", DriftKind.IDENTITY)),
        (lambda r: r.update(anonymized=True), ("record", "anonymized", DriftKind.IDENTITY)),
        (lambda r: r.update(reviewed=True), ("record", "reviewed", DriftKind.EXTRA_KEY)),
        (
            lambda r: _dim(r, "gate-health").update(note="green"),
            ("gate-health", "note", DriftKind.EXTRA_KEY),
        ),
        (
            lambda r: r.update(timestamp="2026-10-02T00:00:00.000Z"),
            ("record", "run_id", DriftKind.IDENTITY),
        ),
        (
            lambda r: r["kpis"].update(total_waves=float(r["kpis"]["total_waves"])),
            ("kpis", "total_waves", DriftKind.FORM),
        ),
        (
            lambda r: r["harness"].update(
                {k: r["harness"].pop(k) for k in ("plugin_version", "platform")}
            ),
            ("record", "harness.(key order)", DriftKind.ORDER),
        ),
    ],
    ids=[
        "model-id-padded",
        "model-extra-key",
        "host-class",
        "hostname-hash-form",
        "harness-extra-key",
        "engine-commit-unknown",
        "engine-commit-form",
        "provenance-extra-key",
        "handle-removed",
        "anonymized-flipped",
        "top-level-extra-key",
        "dimension-extra-key",
        "timestamp-not-in-run-id",
        "kpi-spelled-as-float",
        "key-order",
    ],
)
def test_each_tampering_is_a_classified_drift(
    metrics: Path, change: Callable[[Record], Any], expected: tuple[str, str, DriftKind]
) -> None:
    stored = _store(metrics)
    assert isinstance(stored["kpis"]["total_waves"], int)
    _rewrite(metrics, change)
    result = verify_record(stored["run_id"], metrics)
    assert result.exit_code == 1
    assert expected in {(d.dimension, d.field, d.kind) for d in result.drifts}


def test_duplicate_copies_that_differ_are_drift(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = _store(metrics)
    altered = json.loads(json.dumps(stored))
    gate = _dim(altered, "gate-health")
    gate["status"] = "fail" if gate["status"] != "fail" else "pass"
    gate["evidence"] += " (copy)"
    altered = seal_record(altered)  # a copy written (and sealed) as it is, not edited later
    path = metrics / "eval.jsonl"
    path.write_text(json.dumps(altered) + "\n" + path.read_text(encoding="utf-8"), "utf-8")
    result = verify_record(stored["run_id"], metrics)
    assert result.exit_code == 1
    duplicates = [d for d in result.drifts if d.kind is DriftKind.DUPLICATE]
    assert {(d.dimension, d.field) for d in duplicates} == {
        ("gate-health", "status"),
        ("gate-health", "evidence"),
    }
    assert all(d.labels == ("line 1", "line 2") for d in duplicates)
    assert "line 1 and line 2 are copies of this run id that differ" in duplicates[0].line()


def test_a_copy_that_is_not_a_valid_record_is_drift(metrics: Path) -> None:
    stored = _store(metrics)
    broken = json.loads(json.dumps(stored))
    broken["kpis"]["total_waves"] = -5
    with (metrics / "eval.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(broken) + "\n")
    result = verify_record(stored["run_id"], metrics)
    assert result.exit_code == 1
    # and the copy, line 1's bytes and link appended as line 2, does not follow line 1
    assert [(d.field, d.kind) for d in result.drifts] == [
        ("line 2", DriftKind.DUPLICATE),
        ("provenance.previous_line_sha256", DriftKind.CHAIN),
    ]


def test_a_key_written_twice_is_drift(metrics: Path) -> None:
    """Readers disagree on which copy of a duplicated key wins: never an agreement."""
    stored = _store(metrics)
    path = metrics / "eval.jsonl"
    text = path.read_text(encoding="utf-8")
    status = _dim(stored, "verification-evidence")["status"]
    twice = text.replace(f'"status":"{status}"', f'"status":"fail","status":"{status}"', 1)
    assert twice != text
    path.write_text(twice, encoding="utf-8")
    assert _kinds(metrics, stored["run_id"]) == {("record", "key 'status'", DriftKind.DUPLICATE)}


def test_a_changed_rubric_label_is_drift_not_a_version_mismatch(metrics: Path) -> None:
    stored = _store(metrics)
    _rewrite(metrics, lambda r: r.update(rubric_version="rubric-v1"))
    result = verify_record(stored["run_id"], metrics)
    assert result.exit_code == 1
    kinds = {(d.dimension, d.field, d.kind) for d in result.drifts}
    assert ("record", "provenance.rubric_sha256", DriftKind.IDENTITY) in kinds


def test_a_judge_dimension_is_checked_against_the_judge_contract(metrics: Path) -> None:
    scored = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    scored["dimensions"].insert(0, dict(JUDGE_DIM, prompt="be nice"))  # before deterministic
    (metrics / "eval.jsonl").write_text(json.dumps(scored) + "\n", encoding="utf-8")
    result = verify_record(scored["run_id"], metrics)
    kinds = {(d.dimension, d.field, d.kind) for d in result.drifts}
    assert ("instruction-adherence", "prompt", DriftKind.JUDGE) in kinds
    assert ("record", "dimensions (order)", DriftKind.ORDER) in kinds
    assert result.unverified_dimensions == ("instruction-adherence",)


def test_a_judge_dimension_the_rubric_does_not_define_is_drift(metrics: Path) -> None:
    scored = evalkit.score_session(metrics, timestamp=TIMESTAMP).to_dict()
    scored["dimensions"].append(dict(JUDGE_DIM, id="report-quality"))  # retired in rubric-v2
    (metrics / "eval.jsonl").write_text(json.dumps(scored) + "\n", encoding="utf-8")
    result = verify_record(scored["run_id"], metrics)
    assert ("report-quality", "id", DriftKind.JUDGE) in {
        (d.dimension, d.field, d.kind) for d in result.drifts
    }


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r["kpis"].update(cost=1), "kpis.cost"),
        (lambda r: r.update(schema_version=2), "schema_version"),
        (lambda r: r["model"].update(source="guess"), "model.source"),
        (lambda r: r.update(overall=0.9), "overall"),
    ],
)
def test_a_tampered_line_that_is_no_valid_record_exits_1_naming_the_field(
    metrics: Path, change: Callable[[Record], Any], field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = _store(metrics)
    _rewrite(metrics, change)
    code, out = _verify_cli(metrics, stored["run_id"], capsys)
    assert code == 1
    assert f"line 1 holds run id {stored['run_id']!r} but is not a valid record: {field}" in out


# ----------------------------------------------------------------- every field, one by one


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, index))
    else:
        yield path, value


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    return 1


def _dotted(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)


def _get(rec: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        rec = rec[key]
    return rec


def _set(rec: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        rec = rec[key]
    rec[path[-1]] = value


def _delete(rec: Any, path: tuple[Any, ...]) -> None:
    for key in path[:-1]:
        rec = rec[key]
    del rec[path[-1]]


_SOURCES = ("self-report", "env", "config")
_STATUSES = ("pass", "fail", "not-applicable", "cannot-determine")
_HEX_FIELDS = {"rubric_sha256", "inputs_sha256", "record_sha256", "engine_commit", "hostname_hash"}


def _valid_other(path: tuple[Any, ...], value: Any) -> Any:
    """Another value the field could validly hold (where there is one), else another value."""
    last = path[-1]
    if value is None:
        return {"handle": "someone", "engine_commit": "f" * 40}.get(last, 1)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if last == "source":
        return next(s for s in _SOURCES if s != value)
    if last == "status":
        return next(s for s in _STATUSES if s != value)
    if last == "rubric_version":
        return "rubric-v1" if value == "rubric-v2" else "rubric-v2"
    if last == "timestamp":
        return "2026-10-02T00:00:00.000Z"
    if last in _HEX_FIELDS:
        return value[:-1] + ("0" if value[-1] != "0" else "1")
    return value + "x"


def _walk(
    metrics: Path,
    capsys: pytest.CaptureFixture[str],
    edit: Callable[[Record, tuple[Any, ...]], None],
    paths: list[tuple[Any, ...]],
    *,
    reseal: bool,
) -> dict[str, int]:
    """Exit code of ``verify RUN_ID`` after each edit of the stored line (one path at a time)."""
    (metrics / "eval.jsonl").unlink(missing_ok=True)
    stored = _store(metrics)
    path = metrics / "eval.jsonl"
    line = path.read_text(encoding="utf-8")
    codes = {}
    for key_path in paths:
        path.write_text(line, encoding="utf-8")
        _rewrite(metrics, lambda r, p=key_path: edit(r, p), reseal=reseal)
        codes[_dotted(key_path)], _ = _verify_cli(metrics, stored["run_id"], capsys)
    path.write_text(line, encoding="utf-8")
    return codes


def _all_paths(metrics: Path) -> list[tuple[Any, ...]]:
    rec = evalkit.score_session(metrics, timestamp=TIMESTAMP, handle="tester").to_dict()
    return [p for p, _ in _leaves(rec)]


def test_changing_any_single_field_exits_1(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 5 closed: no field of a stored evalkit record can change unseen. Each leaf is
    changed to another valid value (where one exists): the seal no longer matches, exit 1."""
    paths = _all_paths(metrics)
    codes = _walk(
        metrics, capsys, lambda r, p: _set(r, p, _valid_other(p, _get(r, p))), paths, reseal=False
    )
    assert len(codes) > 40 and "provenance.record_sha256" in codes
    assert {p for p, c in codes.items() if c != 1} == set()


@pytest.mark.slow
def test_deleting_any_key_exits_1(metrics: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Deleting any key, the ones SPEC section 2 gives a default and the seal included."""
    paths = _all_paths(metrics)
    paths += [("provenance",), ("model",), ("harness",), ("kpis",), ("dimensions", 2)]
    codes = _walk(metrics, capsys, _delete, paths, reseal=False)
    assert {"schema_version", "anonymized", "provenance.record_sha256"} <= set(codes)
    assert {p for p, c in codes.items() if c != 1} == set()


def test_removing_the_seal_is_a_seal_drift_that_says_what_it_means(metrics: Path) -> None:
    stored = _store(metrics)
    _rewrite(metrics, lambda r: r["provenance"].pop("record_sha256"), reseal=False)
    result = verify_record(stored["run_id"], metrics)
    assert [(d.field, d.kind) for d in result.drifts] == [
        ("provenance.record_sha256", DriftKind.SEAL)
    ]
    assert "no seal: evalkit seals every record it writes" in result.drifts[0].detail


def test_a_swapped_run_input_is_caught_by_the_seal(metrics: Path) -> None:
    stored = _store(metrics)
    _rewrite(metrics, lambda r: r["model"].update(id="another-model"), reseal=False)
    result = verify_record(stored["run_id"], metrics)
    assert result.exit_code == 1
    assert [(d.field, d.kind) for d in result.drifts] == [
        ("provenance.record_sha256", DriftKind.SEAL)
    ]
    assert "changed after it was written" in result.drifts[0].detail


def _another_commit() -> str:
    """A commit of this repository other than the one that wrote the record (any commit id
    when evalkit does not run from a checkout: then verify can only check the form)."""
    done = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD~1"], capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) in (40, 64) else "e" * 40


def _documented_limit() -> set[str]:
    """The fields docs/RECORDS.md says a resealing forger changes unseen (its table)."""
    text = (REPO_ROOT / "docs" / "RECORDS.md").read_text(encoding="utf-8")
    section = text[
        text.index("**What the seal is not.**") : text.index("**Submission projection.**")
    ]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([a-z_.]+)`", row.split("|")[1])}


LATER = "2027-01-01T00:00:00.000Z"  # after the session ended, as any real run is


def _forge(rec: Record, path: tuple[Any, ...], commit: str) -> None:
    """What a forger who recomputes the seal would write: a valid other value for the field,
    and what the engine derives from it changed along (run_id from timestamp)."""
    if path == ("timestamp",):
        rec["timestamp"] = LATER
        rec["run_id"] = make_run_id(rec["session_id"], LATER)
    elif path == ("provenance", "engine_commit"):
        rec["provenance"]["engine_commit"] = commit
    else:
        _set(rec, path, _valid_other(path, _get(rec, path)))


def _forged_codes(
    metrics: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[Record], None]
) -> tuple[int, str]:
    """Exit code and output of ``verify`` after one resealed edit of the stored line."""
    (metrics / "eval.jsonl").unlink(missing_ok=True)
    _store(metrics)
    path = metrics / "eval.jsonl"
    rec = json.loads(path.read_text(encoding="utf-8"))
    edit(rec)
    path.write_text(json.dumps(seal_record(rec)) + "\n", encoding="utf-8")
    return _verify_cli(metrics, rec["run_id"], capsys)


@pytest.mark.slow
def test_a_forger_who_recomputes_the_seal_changes_exactly_the_documented_fields(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 8 of issue 24: the seal is not a signature. Every field changed to a *valid*
    other value (and what the engine derives from it along, as a forger would), resealed:
    exactly the run inputs verify lists as claims (docs/RECORDS.md) pass, every other change
    is caught; no change is a version mismatch."""
    commit = _another_commit()
    paths = [p for p in _all_paths(metrics) if p not in (("provenance", "record_sha256"),)]
    codes = {
        _dotted(p): _forged_codes(metrics, capsys, lambda r, p=p: _forge(r, p, commit))[0]
        for p in paths
    }
    passed = {p for p, c in codes.items() if c == 0}
    assert passed == set(CLAIMS) == _documented_limit(), sorted(passed)
    # a rubric text this evalkit does not have cannot be re-scored: a version mismatch (exit
    # 3, never an agreement; report says the record is not verified); everything else drifts
    assert {p for p, c in codes.items() if c == 3} == {"provenance.rubric_sha256"}
    assert {c for p, c in codes.items() if p not in passed | {"provenance.rubric_sha256"}} == {1}
    deleted = _walk(metrics, capsys, _delete, paths, reseal=True)
    # schema_version absent means 1, anonymized absent means "no handle" (SPEC section 2)
    assert [p for p, c in deleted.items() if c == 0] == ["schema_version", "anonymized"]
    assert {p for p, c in deleted.items() if c == 0} <= set(DEFAULTED_KEYS)


def test_a_timestamp_before_the_session_ended_is_a_drift(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record scored before its session ended cannot be: resealed or not, a drift."""

    def earlier(rec: Record) -> None:
        rec["timestamp"] = "2026-10-22T10:00:00.000Z"  # the session ended at 2026-10-22T...
        rec["run_id"] = make_run_id(rec["session_id"], rec["timestamp"])

    code, out = _forged_codes(metrics, capsys, earlier)
    assert code == 1, out
    assert "drift [identity]: dimension record field timestamp: stored " in out
    assert "a timestamp before its end is invalid" in out


def test_a_known_rubric_text_under_an_unknown_label_is_a_drift(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 7 of issue 24: labelled rubric-v3, carrying rubric-v2's rubric_sha256, every
    verdict turned to pass, resealed: a version mismatch (exit 3) before; a drift naming the
    label and every verdict it hid now, and ``report`` says the record is not verified."""

    def relabel(rec: Record) -> None:
        rec["rubric_version"] = "rubric-v3"
        for dim in rec["dimensions"]:
            dim["status"] = "pass"

    code, out = _forged_codes(metrics, capsys, relabel)
    assert code == 1, out
    assert "drift [identity]: dimension record field rubric_version: stored 'rubric-v3'" in out
    assert "VERDICT CHANGED" in out.splitlines()[0]
    run_id = json.loads((metrics / "eval.jsonl").read_text(encoding="utf-8"))["run_id"]
    page = metrics.parent / "page.html"
    assert main(["report", run_id, "--metrics-dir", str(metrics), "--out", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "Not verified: treat every verdict below as unconfirmed" in text
    assert "labelled &#x27;rubric-v3&#x27; but was scored against the text of" in text
    assert "warning: not verified: drift: " in capsys.readouterr().err


def test_json_output_names_absent_keys_and_beyond_double_numbers(
    metrics: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = _store(metrics)
    path = metrics / "eval.jsonl"
    rec = json.loads(path.read_text(encoding="utf-8"))
    del rec["kpis"]["token_input"]
    line = json.dumps(rec).replace(
        f'"total_waves": {rec["kpis"]["total_waves"]}', '"total_waves": 1e400'
    )
    path.write_text(line + "\n", encoding="utf-8")
    assert main(["verify", stored["run_id"], "--metrics-dir", str(metrics), "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    drifts = {(d["field"], d["kind"]): d for d in result["drifts"]}
    waves = drifts[("total_waves", "kpi")]
    assert waves["stored"] == "Infinity" and waves["rescored"] == stored["kpis"]["total_waves"]
    missing = drifts[("token_input", "missing-key")]
    assert missing["stored"] is None and missing["stored_absent"] is True
    assert result["verdicts_changed"] == [] and result["claims"] == list(CLAIMS)


def test_report_flags_every_record_it_cannot_re_verify(
    metrics: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Finding 7's second half, as a class: an agreeing record renders without the warning; a
    rubric text this evalkit lacks (a version mismatch), any drift, and a ledger that no
    longer holds the session each open the page with "Not verified"."""
    (metrics / "eval.jsonl").unlink(missing_ok=True)
    run_id = _store(metrics)["run_id"]
    page = tmp_path / "page.html"
    report = ["report", run_id, "--metrics-dir", str(metrics), "--out", str(page)]

    def flagged() -> tuple[bool, str]:
        assert main(report) == 0
        err = capsys.readouterr().err
        return "Not verified" in page.read_text(encoding="utf-8"), err

    assert flagged() == (False, f"evalkit report: wrote {page}\n")

    def unknown_text(rec: Record) -> None:
        rec["provenance"]["rubric_sha256"] = "a" * 64

    def verdict(rec: Record) -> None:
        dim = rec["dimensions"][0]
        dim["status"] = "fail" if dim["status"] != "fail" else "pass"

    for edit in (unknown_text, verdict):
        line = (metrics / "eval.jsonl").read_text(encoding="utf-8")
        rec = json.loads(line)
        edit(rec)
        (metrics / "eval.jsonl").write_text(json.dumps(seal_record(rec)) + "\n", "utf-8")
        shown, err = flagged()
        assert shown and "warning: not verified: " in err, err
        (metrics / "eval.jsonl").write_text(line, encoding="utf-8")
    assert flagged()[0] is False
    moved = tmp_path / "elsewhere"
    shutil.copy(metrics / "eval.jsonl", tmp_path / "eval.jsonl")
    metrics.rename(moved)
    metrics.mkdir()
    shutil.copy(tmp_path / "eval.jsonl", metrics / "eval.jsonl")  # the journal, no ledger
    shown, err = flagged()
    assert shown and "it cannot be re-scored" in err, err
