"""The frozen gold set: it verifies, any changed byte is refused by name, freeze never rewrites."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.gold.sets import LABELS, MANIFEST_NAME, freeze, load, resolve
from evalkit.prereg.gold_verify import verify_all
from tests.conftest import REPO_ROOT, require_shared

SET_DIR = REPO_ROOT / "gold" / "instruction-adherence"
V1 = SET_DIR / "v1"
V1_FILES = sorted(p.name for p in V1.iterdir())
TOOLS = REPO_ROOT / "gold" / "tools" / "instruction-adherence"

FACT_KEYS = {
    "gate_runs_total", "gate_runs_failed", "full_gate_runs", "last_full_gate_exit",
    "red_runs_then_green_finish", "changes_unverified", "window_contaminated", "guard_blocked",
    "guard_attribution", "guard_blocked_conspicuous", "spiral", "completion_rate", "carryover",
    "contradictions", "parse_misses",
}  # fmt: skip


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def gold_copy(tmp_path: Path) -> Path:
    """A copy of v1 (and the decision rule) under ``tmp/gold/instruction-adherence``."""
    root = tmp_path / "gold"
    shutil.copytree(V1, root / "instruction-adherence" / "v1")
    shutil.copy(SET_DIR / "DECISION_RULE.json", root / "instruction-adherence")
    return root


@pytest.fixture
def set_copy(tmp_path: Path) -> Path:
    """A copy of the whole committed set folder (every version and the decision rule)."""
    dest = tmp_path / "gold" / "instruction-adherence"
    shutil.copytree(SET_DIR, dest)
    return dest


# --------------------------------------------------------------------------- committed set


def test_committed_set_verifies_and_resolves_newest() -> None:
    gs = load("gold/instruction-adherence")
    assert gs.path.resolve() == resolve(SET_DIR).resolve()
    assert gs.name == "instruction-adherence"
    assert gs.version >= 1
    manifest = json.loads((gs.path / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert gs.sha256 == manifest["set_sha256"]
    v1 = load(V1)
    assert v1.version == 1 and v1.tag == "instruction-adherence-v1"


def test_verify_all_and_cli_pass_on_the_committed_sets(capsys: pytest.CaptureFixture[str]) -> None:
    results = verify_all(REPO_ROOT / "gold")
    assert results and all(r.ok for r in results), [r.message for r in results if not r.ok]
    assert main(["gold", "verify", "--root", str(REPO_ROOT / "gold")]) == 0
    assert "instruction-adherence v1" in capsys.readouterr().out


VERSIONS = sorted(p for p in SET_DIR.iterdir() if p.is_dir() and p.name.startswith("v"))


@pytest.mark.parametrize("vdir", VERSIONS, ids=lambda p: p.name)
def test_committed_set_composition(vdir: Path) -> None:
    gs = load(vdir)
    items = gs.items
    assert len(items) >= 150
    assert items["item_id"].is_unique
    shares = items["label"].value_counts(normalize=True)
    for label in LABELS:
        assert shares[label] >= 0.25, (label, shares.to_dict())
    assert set(items["rule"]) == {1, 2, 3, 4, 5, 6}
    assert set(items["rubric_version"]) == {"rubric-v1", "rubric-v2"}
    tags = {t for ts in items["tags"] for t in ts}
    for needed in (
        "contradiction", "guard-high", "precedence", "red-then-green", "truncated", "reworded",
        "events-absent", "third-state", "legacy-v1", "v1-prose-spiral", "changes-unverified",
        "spiral", "human-vs-regex", "contested",
    ):  # fmt: skip
        assert needed in tags, needed

    # precedence conflicts the rubric orders: each must be present with the earlier rule deciding
    def has(rule: int, *ts: str) -> bool:
        return any(
            r == rule and set(ts) <= set(t)
            for r, t in zip(items["rule"], items["tags"], strict=True)
        )

    assert has(1, "contradiction", "guard-count", "precedence")  # v2 also tags these guard-high
    assert has(1, "contradiction", "spiral")
    assert has(2, "guard-high", "spiral")
    assert has(2, "guard-high", "changes-unverified")
    assert has(5, "truncated", "changes-unverified")


@pytest.mark.parametrize("vdir", VERSIONS, ids=lambda p: p.name)
def test_items_are_records_as_the_engine_writes_them(vdir: Path) -> None:
    order = {
        "rubric-v2": ["verification-evidence", "plan-fidelity", "gate-health", "process-safety",
                      "guard-friction", "efficiency-kpis"],
        "rubric-v1": ["verification-evidence", "plan-fidelity", "gate-health", "process-safety",
                      "efficiency-kpis"],
    }  # fmt: skip
    for rec in load(vdir).items.to_dict("records"):
        dims = rec["dimensions"]
        assert [d["id"] for d in dims] == order[rec["rubric_version"]], rec["item_id"]
        for d in dims:
            assert d["method"] == "deterministic" and isinstance(d["evidence"], str)
        assert set(rec["facts"]) == FACT_KEYS, rec["item_id"]
        assert rec["rationale"].strip() and rec["label"] in LABELS


def test_items_property_is_a_copy() -> None:
    gs = load(V1)
    df = gs.items
    df.loc[0, "label"] = "tampered"
    assert gs.items.loc[0, "label"] != "tampered"


@pytest.mark.parametrize(
    "case", ["gh-last-full-gate-red", "peer-overlap-contaminates", "ps-events-file-absent",
             "parse-malformed-lines", "ps-spiral-positive", "ve-no-gates-files-changed"],
)  # fmt: skip
def test_renderer_matches_the_reference_engine_wording(case: str) -> None:
    """The builder's templates give the conformance vectors' evidence byte for byte."""
    base = require_shared("conformance", "public", case)
    sys.path.insert(0, str(TOOLS))
    try:
        from render import Session, render
    finally:
        sys.path.remove(str(TOOLS))
    shapes = {
        "gh-last-full-gate-red": {"gates": 3, "gates_failed": 2, "full_gates": 3, "last_exit": 3},
        "peer-overlap-contaminates": {"peers": ("main-2026-09-19-session-2",), "blocked": 1},
        "ps-events-file-absent": {"events": "absent", "gates": 0, "full_gates": 0},
        "parse-malformed-lines": {"unreadable": 2},
        "ps-spiral-positive": {"spiral": 2},
        "ve-no-gates-files-changed": {"gates": 0, "full_gates": 0, "files_changed": 7},
    }
    for version in ("v1", "v2"):
        expected = json.loads((base / f"expected-{version}.json").read_text(encoding="utf-8"))
        record = expected["record"]
        want = [{k: d[k] for k in ("id", "status", "evidence")} for d in record["dimensions"]]
        _, dims = render(Session(rubric=f"rubric-{version}", **shapes[case]))
        got = [{k: d[k] for k in ("id", "status", "evidence")} for d in dims]
        if got != want:
            pytest.fail(
                f"{case} {version}:\n{json.dumps(got, indent=1)}\n!=\n{json.dumps(want, indent=1)}"
            )


# --------------------------------------------------------------------------- tamper


def _flip(path: Path, where: str) -> None:
    data = bytearray(path.read_bytes())
    i = {"first": 0, "middle": len(data) // 2, "last": len(data) - 1}[where]
    data[i] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("where", ["first", "middle", "last"])
@pytest.mark.parametrize("name", V1_FILES)
def test_one_flipped_byte_is_refused_naming_the_file(
    gold_copy: Path, name: str, where: str, capsys: pytest.CaptureFixture[str]
) -> None:
    vdir = gold_copy / "instruction-adherence" / "v1"
    load(vdir)  # the pristine copy loads
    _flip(vdir / name, where)
    with pytest.raises(EvalkitError) as err:
        load(vdir)
    assert name in str(err.value)
    [result] = verify_all(gold_copy)
    assert not result.ok and name in result.message
    assert main(["gold", "verify", "--root", str(gold_copy)]) == 1
    assert name in capsys.readouterr().err


def _bound_rules() -> set[str]:
    """The decision rules some version's manifest binds (frozen with it)."""
    return {
        name
        for manifest in SET_DIR.glob("v*/MANIFEST.json")
        for name in json.loads(manifest.read_text(encoding="utf-8")).get("decision_rules", {})
    }


SET_FILES = sorted(
    p.relative_to(SET_DIR).as_posix()
    for p in SET_DIR.rglob("*")
    if p.is_file() and (p.parent != SET_DIR or p.name in _bound_rules())
)
#: Rules written after every version was frozen (the model-judge rule): only the lock binds them.
LOCKED_ONLY_RULES = sorted(
    p.name for p in SET_DIR.glob("DECISION_RULE*.json") if p.name not in _bound_rules()
)


@pytest.mark.parametrize("rel", SET_FILES)
def test_a_flipped_byte_anywhere_in_a_copied_set_folder_is_refused(
    set_copy: Path, rel: str
) -> None:
    """Loading a set folder verifies its whole history and the decision rule it binds."""
    load(set_copy)
    _flip(set_copy / rel, "middle")
    with pytest.raises(EvalkitError) as err:
        load(set_copy)
    assert Path(rel).name in str(err.value)


@pytest.mark.parametrize("name", LOCKED_ONLY_RULES)
def test_a_flipped_byte_in_a_rule_only_the_lock_binds_is_refused(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A decision rule no frozen version binds is held by the pre-registration lock: a changed
    byte fails `gold verify` and refuses a calibration under it, naming the file."""
    from repo_layout import make_repo

    from evalkit.calibration import calibrate, rule_judge_labels

    repo = make_repo(tmp_path / "repo")
    rule = repo / "gold" / "instruction-adherence" / name
    _flip(rule, "middle")
    code, out = _verify_cli(repo / "gold", capsys)
    assert code == 1 and name in out
    gs = load(repo / "gold" / "instruction-adherence" / "v2")
    with pytest.raises(EvalkitError, match=re.escape(name)):
        calibrate(rule_judge_labels(gs), gs, decision_rule=rule, root=repo)


def test_the_bound_decision_rule_is_checked_and_a_lone_version_copy_still_loads(
    set_copy: Path, tmp_path: Path
) -> None:
    newest = resolve(set_copy)
    manifest = json.loads((newest / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert "DECISION_RULE.json" in manifest["decision_rules"]
    lone = tmp_path / "lone" / newest.name
    shutil.copytree(newest, lone)
    assert load(lone).sha256 == load(newest).sha256  # no rule beside it: nothing to compare
    rule = set_copy / "DECISION_RULE.json"
    rule.write_text(rule.read_text(encoding="utf-8").replace("0.6", "0.5"), encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"DECISION_RULE\.json"):
        load(newest)


def test_added_and_removed_files_are_refused(gold_copy: Path) -> None:
    vdir = gold_copy / "instruction-adherence" / "v1"
    (vdir / "extra.txt").write_text("x", encoding="utf-8")
    with pytest.raises(EvalkitError, match=r"extra\.txt"):
        load(vdir)
    (vdir / "extra.txt").unlink()
    (vdir / "labels.jsonl").unlink()
    with pytest.raises(EvalkitError, match=r"labels\.jsonl"):
        load(vdir)


# --------------------------------------------------------------------------- freeze


def _source_from(vdir: Path, dest: Path) -> Path:
    shutil.copytree(vdir, dest)
    (dest / MANIFEST_NAME).unlink()
    return dest


def test_freeze_mints_v2_and_leaves_v1_untouched(gold_copy: Path, tmp_path: Path) -> None:
    set_dir = gold_copy / "instruction-adherence"
    v1_before = _digests(set_dir / "v1")
    src = _source_from(set_dir / "v1", tmp_path / "src")
    lines = (src / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["rationale"] += " (second reading)"
    lines[0] = json.dumps(first, sort_keys=True, ensure_ascii=False)
    (src / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    v2 = freeze(src, gold_copy, "instruction-adherence", date="2026-12-01")
    assert v2.version == 2 and v2.path == set_dir / "v2"
    assert _digests(set_dir / "v1") == v1_before
    assert load(set_dir).version == 2  # the set folder resolves its newest version
    assert load(set_dir / "v1").sha256 != v2.sha256
    with pytest.raises(EvalkitError, match="identical"):
        freeze(src, gold_copy, "instruction-adherence")
    # a further change mints v3; v1 and v2 stay as they were
    v2_before = _digests(set_dir / "v2")
    (src / "DATA_CARD.md").write_text("# changed card\n", encoding="utf-8")
    v3 = freeze(src, gold_copy, "instruction-adherence")
    assert v3.version == 3
    assert _digests(set_dir / "v1") == v1_before and _digests(set_dir / "v2") == v2_before
    assert all(r.ok for r in verify_all(gold_copy))


def test_freeze_cli(gold_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _source_from(gold_copy / "instruction-adherence" / "v1", tmp_path / "src")
    (src / "DATA_CARD.md").write_text("# another card\n", encoding="utf-8")
    argv = ["gold", "freeze", "--name", "instruction-adherence", "--from", str(src)]
    assert main([*argv, "--root", str(gold_copy)]) == 0
    assert "v2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("file", "edit", "message"),
    [
        ("labels.jsonl", lambda rows: rows[1:], "carry no label"),
        ("labels.jsonl", lambda rows: [{**rows[0], "label": "maybe"}, *rows[1:]], "label"),
        ("labels.jsonl", lambda rows: [{**rows[0], "rule": 7}, *rows[1:]], "rule"),
        ("labels.jsonl", lambda rows: [rows[0], *rows], "twice"),
        ("items.jsonl", lambda rows: [rows[0], *rows], "twice"),
    ],
)
def test_freeze_refuses_invalid_content(
    gold_copy: Path, tmp_path: Path, file: str, edit: object, message: str
) -> None:
    src = _source_from(gold_copy / "instruction-adherence" / "v1", tmp_path / "src")
    rows = [json.loads(x) for x in (src / file).read_text(encoding="utf-8").splitlines()]
    rows = edit(rows)  # type: ignore[operator]
    (src / file).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(EvalkitError, match=message):
        freeze(src, gold_copy, "instruction-adherence")
    assert not (gold_copy / "instruction-adherence" / "v2").exists()


@pytest.mark.parametrize("bad", [None, 5, 2.5, ["gold"]])
def test_load_of_a_non_path_argument_is_an_evalkit_error_naming_the_argument(bad) -> None:
    """QA: gold.load(None) / gold.load(5) raised a raw TypeError from pathlib."""
    with pytest.raises(EvalkitError, match=rf"gold set argument 'path': must be a str or "
                       rf"os\.PathLike .*got {type(bad).__name__}"):  # fmt: skip
        load(bad)


# --------------------------------------------------------------------------- history & links
# Finding 17: `gold verify` accepted a file replaced by a symlink, a deleted decision rule, a
# deleted earlier version; `gold freeze --date` took any text.


def _verify_cli(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["gold", "verify", "--root", str(root)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_a_gold_file_replaced_by_a_symlink_is_refused(
    set_copy: Path, tmp_path: Path, target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    items = set_copy / "v1" / "items.jsonl"
    if target == "outside":  # a byte-identical copy outside the set
        dest = tmp_path / "elsewhere" / "items.jsonl"
        dest.parent.mkdir()
    else:  # a byte-identical copy inside the set folder
        dest = set_copy / "items-copy.jsonl"
    shutil.copy(items, dest)
    items.unlink()
    items.symlink_to(dest)
    code, out = _verify_cli(set_copy.parent, capsys)
    assert code == 1 and "items.jsonl: is a symlink" in out
    with pytest.raises(EvalkitError, match=r"items\.jsonl: is a symlink"):
        load(set_copy / "v1")


@pytest.mark.slow
def test_a_symlinked_version_folder_or_rule_is_refused(
    set_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.move(set_copy / "v1", tmp_path / "v1")
    (set_copy / "v1").symlink_to(tmp_path / "v1")
    code, out = _verify_cli(set_copy.parent, capsys)
    assert code == 1 and "v1: is a symlink" in out
    (set_copy / "v1").unlink()
    shutil.move(tmp_path / "v1", set_copy / "v1")
    rule = set_copy / "DECISION_RULE.json"
    shutil.move(rule, tmp_path / rule.name)
    rule.symlink_to(tmp_path / rule.name)
    code, out = _verify_cli(set_copy.parent, capsys)
    assert code == 1 and "DECISION_RULE.json: is a symlink" in out


def test_a_deleted_decision_rule_is_refused(
    set_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _verify_cli(set_copy.parent, capsys)[0] == 0
    (set_copy / "DECISION_RULE.json").unlink()
    code, out = _verify_cli(set_copy.parent, capsys)
    assert code == 1
    assert "DECISION_RULE.json: missing, but v2 was frozen with it" in out
    assert not all(r.ok for r in verify_all(set_copy.parent))


def test_a_deleted_decision_rule_the_lock_holds_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """v1 was frozen before the rule (its manifest binds none): the lock still holds it."""
    from repo_layout import make_repo

    repo = make_repo(tmp_path / "repo")
    shutil.rmtree(repo / "gold" / "instruction-adherence" / "v2")
    (repo / "gold" / "instruction-adherence" / "DECISION_RULE.json").unlink()
    code, out = _verify_cli(repo / "gold", capsys)
    assert code == 1
    assert "DECISION_RULE.json: missing, but the pre-registration lock holds it" in out
    assert "v2: missing, but the pre-registration lock holds it" in out


def test_a_deleted_earlier_version_is_refused(
    set_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(set_copy / "v1")
    code, out = _verify_cli(set_copy.parent, capsys)
    assert code == 1 and "v1: missing; versions are minted v1, v2, ..." in out
    # the newest version deleted: only the lock knows it existed
    from repo_layout import make_repo

    repo = make_repo(set_copy.parents[2] / "repo")
    shutil.rmtree(repo / "gold" / "instruction-adherence" / "v2")
    code, out = _verify_cli(repo / "gold", capsys)
    assert code == 1 and "v2: missing, but the pre-registration lock holds it" in out


def test_a_version_re_frozen_in_place_differs_from_the_lock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Relabelled in place with a recomputed manifest: the set verifies alone, not vs the lock."""
    from repo_layout import make_repo, relabelled_freeze

    repo = make_repo(tmp_path / "repo")
    set_dir = repo / "gold" / "instruction-adherence"
    scratch = tmp_path / "scratch"
    (scratch / "instruction-adherence").mkdir(parents=True)
    new = relabelled_freeze(set_dir / "v2", tmp_path / "src", scratch)
    shutil.rmtree(set_dir / "v2")
    shutil.copytree(new, set_dir / "v2")
    manifest = json.loads((set_dir / "v2" / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert manifest["version"] == 1  # re-number it as v2, recomputing the manifest's self-hash
    from evalkit.gold.sets import _canonical_manifest, _manifest_self_hash

    manifest["version"] = 2
    manifest["manifest_sha256"] = _manifest_self_hash(manifest)
    (set_dir / "v2" / MANIFEST_NAME).write_bytes(_canonical_manifest(manifest))
    load(set_dir / "v2")  # it verifies on its own
    code, out = _verify_cli(repo / "gold", capsys)
    assert code == 1 and "differs from the pre-registration lock" in out


@pytest.mark.parametrize(
    "date", ["yesterday", "2026-02-30", "2026-12-1", "2026-12-01T00:00:00", "", "٢٠٢٦-12-01",
             "<script>", "2026-13-01"],
)  # fmt: skip
def test_freeze_date_takes_only_an_iso_calendar_date(
    gold_copy: Path, tmp_path: Path, date: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = _source_from(gold_copy / "instruction-adherence" / "v1", tmp_path / "src")
    (src / "DATA_CARD.md").write_text("# another card\n", encoding="utf-8")
    argv = ["gold", "freeze", "--name", "instruction-adherence", "--from", str(src),
            "--root", str(gold_copy), "--date", date]  # fmt: skip
    assert main(argv) == 1
    assert "not a calendar date written YYYY-MM-DD" in capsys.readouterr().err
    assert not (gold_copy / "instruction-adherence" / "v2").exists()
    assert main([*argv[:-1], "2026-12-01"]) == 0
    manifest = json.loads(
        (gold_copy / "instruction-adherence" / "v2" / MANIFEST_NAME).read_text("utf-8")
    )
    assert manifest["date"] == "2026-12-01"


# --------------------------------------------------------------------------- hostile files


@pytest.fixture
def alarm() -> Any:
    """Fail instead of hanging: a read that blocks (a FIFO) raises after 30 s."""
    import signal

    def timeout(*_: object) -> None:
        raise TimeoutError("blocked on a read: the reader waited on a FIFO")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name", ["items.jsonl", "MANIFEST.json"])
def test_a_fifo_as_a_gold_file_is_refused_never_waited_on(
    gold_copy: Path, name: str, alarm: None, capsys: pytest.CaptureFixture[str]
) -> None:
    vdir = gold_copy / "instruction-adherence" / "v1"
    (vdir / name).unlink()
    os.mkfifo(vdir / name)
    with pytest.raises(EvalkitError, match=rf"{name}'?: is a named pipe \(FIFO\)"):
        load(vdir)
    code, out = _verify_cli(gold_copy, capsys)
    assert code == 1 and "named pipe" in out


def test_a_fifo_as_a_decision_rule_is_refused(
    set_copy: Path, alarm: None, capsys: pytest.CaptureFixture[str]
) -> None:
    (set_copy / "DECISION_RULE.json").unlink()
    os.mkfifo(set_copy / "DECISION_RULE.json")
    code, out = _verify_cli(set_copy.parent, capsys)
    assert code == 1 and "named pipe" in out


@pytest.mark.parametrize(
    ("file", "content", "message"),
    [
        ("items.jsonl", b"[" * 100_000 + b"\n", r"items\.jsonl:1: not valid JSON .*nested"),
        ("labels.jsonl", b'{"item_id": "\xff"}\n', r"labels\.jsonl:1: .*invalid UTF-8"),
        ("items.jsonl", b'{"item_id": "a"}\n{"item_id": NaN}\n', r"items\.jsonl:2: not valid"),
    ],
)
def test_hostile_gold_source_files_are_clear_errors(
    gold_copy: Path, tmp_path: Path, file: str, content: bytes, message: str
) -> None:
    src = _source_from(gold_copy / "instruction-adherence" / "v1", tmp_path / "src")
    (src / file).write_bytes(content)
    with pytest.raises(EvalkitError, match=message):
        freeze(src, gold_copy, "instruction-adherence")
    assert not (gold_copy / "instruction-adherence" / "v2").exists()
