"""Calibration certificates: minted only by register(), re-checked from content, forgeries refused.

Every test works in a temporary copy of the repository layout (``repo_layout.make_repo``): the
repository's own ``calibrations/``, gold sets and lock are never written.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from record_factory import judge_block, make_record
from repo_layout import (
    RULE_JUDGE,
    SET,
    make_repo,
    mint_rule_judge,
    relabelled_copy_outside,
    relabelled_freeze,
    write_lock,
)
from repo_layout import labels_sha256 as _labels_sha
from repo_layout import only_certificate as _cert_path
from repo_layout import plant_certificate as _plant

from evalkit import validate_record
from evalkit.calibration import (
    CertificateError,
    accepted_calibrations,
    calibrate,
    certificate_bytes,
    is_registered,
    register,
    rule_judge_labels,
    verify_certificate,
)
from evalkit.calibration import calibrations as calibrations_module
from evalkit.calibration import certificate_check as check_module
from evalkit.errors import EvalkitError, ValidationError
from evalkit.gold import sets as gold_module
from evalkit.gold.sets import LABELS, load
from evalkit.journal import reader as journal
from evalkit.record.calibration_status import AcceptedCalibrations

N_RES = 300  # the displayed interval; graduation is judged on the rule's 2000 resamples anyway
JUDGE = RULE_JUDGE


pytestmark = pytest.mark.usefixtures("no_lock_or_registry_env")
#: The judge section of a certificate made from a labels table (no judge identity).
FILE_JUDGE = {"identity": None, "identity_sha256": None, "origin": "file", "base_url_host": None,
              "run_log_sha256": None, "source": None}  # fmt: skip


@pytest.fixture(scope="module")
def minted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A repository copy with one registered certificate: the rule judge on gold v2."""
    repo = make_repo(tmp_path_factory.mktemp("repo"))
    result, cert = mint_rule_judge(repo, N_RES)
    return {"repo": repo, "result": result, "cert": cert, "gold": load(repo / "gold" / SET / "v2")}


@pytest.fixture
def repo_with_cert(minted: dict[str, Any], tmp_path: Path) -> Path:
    """A private copy of the minted repository, free to tamper with."""
    dest = tmp_path / "repo"
    shutil.copytree(minted["repo"], dest)
    return dest


def _judge_record(status: str, ref: str | None) -> dict[str, Any]:
    """A record whose judge dimension claims ``status`` as the rule judge would (its identity)."""
    rec = make_record()
    rec["dimensions"][-1].update(calibration_status=status, calibration_ref=ref)
    rec["dimensions"][-1]["judge"] = judge_block()
    return rec


# --------------------------------------------------------------------------- the positive path


def test_register_writes_a_certificate_that_re_checks(minted: dict[str, Any]) -> None:
    repo, result, cert = minted["repo"], minted["result"], minted["cert"]
    path = _cert_path(repo)
    data = path.read_bytes()
    assert path.name == hashlib.sha256(data).hexdigest() + ".json"
    assert cert.calibration_ref == result.calibration_ref == path.stem
    assert cert.calibration_status == f"calibrated:{SET}-v2:{path.stem[:8]}"
    assert cert.calibration_status == result.calibration_status
    assert data == certificate_bytes(result)  # the bytes are a function of the result
    body = json.loads(data)
    lock = json.loads((repo / "preregistration.lock.json").read_text(encoding="utf-8"))
    locked = {e["path"]: e["sha256"] for e in lock["entries"]}
    assert body["gold"]["sha256"] == locked[f"gold/{SET}/v2"] == minted["gold"].sha256
    assert body["decision_rule"]["sha256"] == locked[f"gold/{SET}/DECISION_RULE.json"]
    assert len(body["labels"]["items"]) == 199
    assert body["labels"]["sha256"] == _labels_sha(body["labels"]["items"])
    assert body["result"]["graduates"] is True
    assert body["result"]["graduation"]["n_resamples"] == 2000
    assert accepted_calibrations(repo).entries == {cert.entry}
    assert is_registered(result)
    # re-checking the bytes alone (no file name) gives the same answer
    assert verify_certificate(data, root=repo).entry == cert.entry


def test_a_record_carrying_the_minted_status_validates_and_journals(
    minted: dict[str, Any], tmp_path: Path
) -> None:
    cert = minted["cert"]
    accepted = accepted_calibrations(minted["repo"])
    rec = _judge_record(cert.calibration_status, cert.calibration_ref)
    assert validate_record(rec, accepted=accepted)["dimensions"][-1]["calibration_ref"]
    path = tmp_path / "eval.jsonl"
    journal.append(path, rec, accepted=accepted)
    assert len(journal.read(path, accepted=accepted).records) == 1
    read = journal.read(path)  # nothing verified passed in: the claim does not stand
    assert read.records == [] and "calibration_status" in read.diagnostics[0].reason
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        journal.append(tmp_path / "other.jsonl", rec)
    for other_ref in (cert.calibration_ref[:8], cert.calibration_ref[:8] + "0" * 56, None):
        with pytest.raises(ValidationError, match="calibration_status"):
            validate_record(_judge_record(cert.calibration_status, other_ref), accepted=accepted)


def test_calibrate_is_deterministic_and_register_is_idempotent(minted: dict[str, Any]) -> None:
    repo, gold = minted["repo"], minted["gold"]
    again = calibrate(rule_judge_labels(gold), gold, judge=JUDGE, n_resamples=N_RES, root=repo)
    assert again.calibration_ref == minted["result"].calibration_ref
    assert register(again).entry == minted["cert"].entry
    assert len(list((repo / "calibrations").iterdir())) == 1


# --------------------------------------------------------------------------- tampering


def test_deleting_the_certificate_refuses_the_status_everywhere(repo_with_cert: Path) -> None:
    cert = accepted_calibrations(repo_with_cert)
    [(_dim, status, ref)] = cert.entries
    rec = _judge_record(status, ref)
    validate_record(rec, accepted=cert)
    _cert_path(repo_with_cert).unlink()
    after = accepted_calibrations(repo_with_cert)
    assert after.entries == frozenset()
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        validate_record(rec, accepted=after)


@pytest.mark.parametrize("where", ["graduates", "kappa", "label"])
def test_one_edited_byte_refuses_the_certificate(repo_with_cert: Path, where: str) -> None:
    path = _cert_path(repo_with_cert)
    text = path.read_text(encoding="utf-8")
    edits = {
        "graduates": ('"graduates": true', '"graduates": truE'),
        "kappa": ('"statistic": 0.8', '"statistic": 0.9'),
        "label": ('"label": "fail"', '"label": "pass"'),
    }
    old, new = edits[where]
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    accepted = accepted_calibrations(repo_with_cert)
    assert accepted.entries == frozenset()
    [(name, reason)] = accepted.refused
    assert name == path.name and "its name is not the sha256 of its bytes" in reason
    # renamed to its new sha256, it is still refused: the content no longer re-checks
    data = path.read_bytes()
    renamed = path.with_name(hashlib.sha256(data).hexdigest() + ".json")
    path.rename(renamed)
    with pytest.raises(CertificateError, match=r"refused"):
        verify_certificate(renamed, root=repo_with_cert)


def test_a_renamed_judge_is_another_certificate(repo_with_cert: Path) -> None:
    """The judge's name is part of what the reference hashes: renaming it (and the file) makes
    another certificate, so a record carrying the old status and reference is refused."""
    [(_dim, status, ref)] = accepted_calibrations(repo_with_cert).entries
    path = _cert_path(repo_with_cert)
    data = path.read_bytes().replace(b'"judge": "rule-', b'"judge": "Rule-', 1)
    path.unlink()
    renamed = path.with_name(hashlib.sha256(data).hexdigest() + ".json")
    renamed.write_bytes(data)
    accepted = accepted_calibrations(repo_with_cert)
    assert ref not in {r for _, _, r in accepted.entries} and len(accepted.entries) == 1
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        validate_record(_judge_record(status, ref), accepted=accepted)


def test_a_relabelled_gold_set_in_place_refuses_its_certificates(repo_with_cert: Path) -> None:
    """The gold set on disk must hash to what the certificate and the lock hold."""
    vdir = repo_with_cert / "gold" / SET / "v2"
    labels = vdir / "labels.jsonl"
    labels.write_text(labels.read_text(encoding="utf-8").replace('"pass"', '"fail"', 1), "utf-8")
    with pytest.raises(CertificateError, match=r"labels\.jsonl: bytes changed"):
        verify_certificate(_cert_path(repo_with_cert), root=repo_with_cert)


# --------------------------------------------------------------------------- forgeries


def test_a_hand_written_certificate_is_refused(repo_with_cert: Path) -> None:
    real = json.loads(_cert_path(repo_with_cert).read_text(encoding="utf-8"))
    forged = {"kind": real["kind"], "schema": 2, "dimension_id": "instruction-adherence",
              "calibration_status": f"calibrated:{SET}-v2:deadbeef", "graduated": True}  # fmt: skip
    path = _plant(repo_with_cert, forged)
    with pytest.raises(CertificateError, match=rf"{path.name}: refused: field gold"):
        verify_certificate(path, root=repo_with_cert)
    garbage = repo_with_cert / "calibrations" / ("0" * 64 + ".json")
    garbage.write_bytes(b"[" * 5000)
    refused = dict(accepted_calibrations(repo_with_cert).refused)
    assert "not the sha256" in refused[garbage.name]
    assert "refused" in refused[path.name]


def test_a_certificate_under_a_wrong_name_is_refused(repo_with_cert: Path) -> None:
    path = _cert_path(repo_with_cert)
    wrong = path.with_name(path.stem[:-1] + ("0" if path.stem[-1] != "0" else "1") + ".json")
    path.rename(wrong)
    with pytest.raises(CertificateError, match="its name is not the sha256 of its bytes"):
        verify_certificate(wrong, root=repo_with_cert)


def test_labels_that_do_not_graduate_are_refused_even_with_the_right_hashes(
    repo_with_cert: Path,
) -> None:
    body = json.loads(_cert_path(repo_with_cert).read_text(encoding="utf-8"))
    rng = np.random.default_rng(3)
    items = [{"item_id": i["item_id"], "label": str(rng.choice(LABELS))}
             for i in body["labels"]["items"]]  # fmt: skip
    body["labels"] = {"sha256": _labels_sha(items), "items": items}
    body["judge"] = FILE_JUDGE  # not the rule judge's labels, so not claimed as them
    path = _plant(repo_with_cert, body)  # still claims graduates: true
    with pytest.raises(CertificateError, match=r"re-scored against .* do not graduate"):
        verify_certificate(path, root=repo_with_cert)


def test_a_judge_that_graduates_but_other_figures_is_refused(repo_with_cert: Path) -> None:
    body = json.loads(_cert_path(repo_with_cert).read_text(encoding="utf-8"))
    body["result"]["kappa"]["statistic"] = 0.99  # a better-looking judge, same labels
    path = _plant(repo_with_cert, body)
    with pytest.raises(CertificateError, match=r"does not reproduce it \(result\.kappa\.statistic"):
        verify_certificate(path, root=repo_with_cert)


def test_labels_for_another_gold_set_are_refused(repo_with_cert: Path) -> None:
    body = json.loads(_cert_path(repo_with_cert).read_text(encoding="utf-8"))
    items = [{"item_id": f"other-{k:03d}", "label": "pass"} for k in range(199)]
    body["labels"] = {"sha256": _labels_sha(items), "items": items}
    body["judge"] = FILE_JUDGE
    path = _plant(repo_with_cert, body)
    with pytest.raises(CertificateError, match="is not in the gold set"):
        verify_certificate(path, root=repo_with_cert)
    # a certificate honestly made on v1 but claiming v2 re-scores against v2: refused
    v1 = load(repo_with_cert / "gold" / SET / "v1")
    on_v1 = calibrate(v1.items[["item_id", "label"]], v1, n_resamples=N_RES, root=repo_with_cert)
    body = json.loads(certificate_bytes(on_v1))
    v2 = load(repo_with_cert / "gold" / SET / "v2")
    body["gold"].update(path=f"gold/{SET}/v2", sha256=v2.sha256, version=2)
    path = _plant(repo_with_cert, body)
    with pytest.raises(CertificateError, match="does not reproduce it"):
        verify_certificate(path, root=repo_with_cert)


@pytest.mark.parametrize(
    "gold_path", ["../elsewhere/instruction-adherence/v2", "/tmp/instruction-adherence/v2"]
)
def test_a_certificate_bound_to_a_gold_copy_outside_the_repository_is_refused(
    repo_with_cert: Path, gold_path: str
) -> None:
    body = json.loads(_cert_path(repo_with_cert).read_text(encoding="utf-8"))
    body["gold"]["path"] = gold_path
    path = _plant(repo_with_cert, body)
    with pytest.raises(CertificateError, match="not a path inside the repository's gold/"):
        verify_certificate(path, root=repo_with_cert)


def test_a_relabelled_gold_copy_outside_the_repository_is_shown_never_minted(
    repo_with_cert: Path, tmp_path: Path
) -> None:
    """Finding 2: it graduates (kappa 1) and is computed and shown, but never minted."""
    vdir = relabelled_copy_outside(repo_with_cert, tmp_path)
    gs = load(vdir)
    res = calibrate(rule_judge_labels(gs), gs, n_resamples=N_RES, root=repo_with_cert)
    assert res.graduates and res.kappa.statistic == pytest.approx(1.0)
    assert not res.mintable and "outside the repository" in res.mint_reason
    assert res.calibration_status == "uncalibrated" and res.calibration_ref is None
    assert res.to_dict()["mintable"] is False
    before = sorted((repo_with_cert / "calibrations").iterdir())
    with pytest.raises(EvalkitError, match="cannot be registered: the gold set lies outside"):
        register(res)
    assert sorted((repo_with_cert / "calibrations").iterdir()) == before


def test_a_relabelled_version_inside_the_repository_but_not_locked_is_never_minted(
    repo_with_cert: Path, tmp_path: Path
) -> None:
    vdir = relabelled_freeze(
        repo_with_cert / "gold" / SET / "v2", tmp_path / "src", repo_with_cert / "gold"
    )  # v3
    gs = load(vdir)
    res = calibrate(rule_judge_labels(gs), gs, n_resamples=N_RES, root=repo_with_cert)
    assert res.graduates and not res.mintable
    assert f"gold/{SET}/v3 is not in the pre-registration lock" in res.mint_reason
    with pytest.raises(EvalkitError, match="not in the pre-registration lock"):
        register(res)
    # a certificate forged for it (made as if v3 were locked) is refused on the real lock
    write_lock(repo_with_cert)  # a lock that also holds v3 ...
    forged = _plant(repo_with_cert, json.loads(certificate_bytes(calibrate(
        rule_judge_labels(gs), gs, n_resamples=N_RES, root=repo_with_cert))))  # fmt: skip
    assert verify_certificate(forged, root=repo_with_cert)  # ... is what made it verify
    lock = repo_with_cert / "preregistration.lock.json"
    body = json.loads(lock.read_text(encoding="utf-8"))
    body["entries"] = [e for e in body["entries"] if not e["path"].endswith("/v3")]
    lock.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(CertificateError, match="v3 is not in the pre-registration lock"):
        verify_certificate(forged, root=repo_with_cert)


def test_a_certificate_whose_gold_sha_differs_from_the_lock_is_refused(
    repo_with_cert: Path,
) -> None:
    lock = repo_with_cert / "preregistration.lock.json"
    body = json.loads(lock.read_text(encoding="utf-8"))
    for e in body["entries"]:
        if e["path"] == f"gold/{SET}/v2":
            e["sha256"] = "0" * 64
    lock.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(CertificateError, match=rf"{SET}/v2.*changed since it was locked"):
        verify_certificate(_cert_path(repo_with_cert), root=repo_with_cert)
    lock.unlink()
    with pytest.raises(CertificateError, match="no pre-registration lock"):
        verify_certificate(_cert_path(repo_with_cert), root=repo_with_cert)


# --------------------------------------------------------------------------- registry & env


def test_a_hand_written_registry_line_and_the_environment_have_no_effect(
    repo_with_cert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 1 and 3: only verified certificates count; no file or variable names one."""
    [(dim, status, ref)] = accepted_calibrations(repo_with_cert).entries
    forged_ref = hashlib.sha256(b"forged").hexdigest()
    forged_status = f"calibrated:{SET}-v2:{forged_ref[:8]}"
    line = {"dimension_id": dim, "calibration_status": forged_status,
            "calibration_ref": forged_ref, "graduated": True}  # fmt: skip
    (repo_with_cert / "calibrations" / "registry.jsonl").write_text(json.dumps(line) + "\n")
    registry = tmp_path / "registry.jsonl"
    registry.write_text(json.dumps(line) + "\n", encoding="utf-8")
    monkeypatch.setenv("EVALKIT_CALIBRATION_REGISTRY", str(registry))
    accepted = accepted_calibrations(repo_with_cert)
    assert accepted.entries == {(dim, status, ref)} and accepted.refused == ()
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        validate_record(_judge_record(forged_status, forged_ref), accepted=accepted)
    with pytest.raises(ValidationError, match="is not an accepted calibration status"):
        validate_record(_judge_record(forged_status, forged_ref))


_CHILD = """
import json, sys
from pathlib import Path
from evalkit.journal import reader as journal
from evalkit.calibration import accepted_calibrations
path, root = Path(sys.argv[1]), Path(sys.argv[2])
print(len(journal.read(path, accepted=accepted_calibrations(root)).records))
"""


@pytest.mark.slow
def test_the_same_journal_line_has_the_same_validity_in_another_process(
    repo_with_cert: Path, tmp_path: Path
) -> None:
    """Finding 3: validity is a function of the line and the repository's content."""
    import subprocess
    import sys

    from repo_layout import clean_env

    [(_dim, status, ref)] = accepted_calibrations(repo_with_cert).entries
    path = tmp_path / "eval.jsonl"
    journal.append(path, _judge_record(status, ref), accepted=accepted_calibrations(repo_with_cert))

    def child(env: dict[str, str]) -> int:
        code = [sys.executable, "-c", _CHILD, str(path), str(repo_with_cert)]
        out = subprocess.run(code, capture_output=True, text=True, env=env, check=True)
        return int(out.stdout)

    here = len(journal.read(path, accepted=accepted_calibrations(repo_with_cert)).records)
    assert here == child(clean_env()) == 1
    elsewhere = clean_env(EVALKIT_CALIBRATION_REGISTRY=str(tmp_path / "nowhere.jsonl"))
    assert child(elsewhere) == 1
    _cert_path(repo_with_cert).unlink()
    here = len(journal.read(path, accepted=accepted_calibrations(repo_with_cert)).records)
    assert here == child(clean_env()) == 0


# --------------------------------------------------------------------------- lock & no-lock


def test_no_lock_refuses_unless_asked_and_then_never_mints(
    repo_with_cert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo_with_cert / "preregistration.lock.json").unlink()
    gs = load(repo_with_cert / "gold" / SET / "v2")
    labels = rule_judge_labels(gs)
    with pytest.raises(EvalkitError, match=r"no pre-registration lock .*--no-lock"):
        calibrate(labels, gs, n_resamples=N_RES, root=repo_with_cert)
    res = calibrate(labels, gs, n_resamples=N_RES, root=repo_with_cert, no_lock=True)
    # nothing pre-registered was checked: shown, never a graduation, never minted
    assert not res.graduates and not res.mintable and not res.pre_registered
    assert res.graduation_reason.startswith("not pre-registered: run with --no-lock")
    assert res.to_dict()["preregistration"] == "none (--no-lock)"
    with pytest.raises(EvalkitError, match="did not graduate"):
        register(res)
    # a lock named elsewhere lets the run start, but only the repository's own lock mints
    write_lock(repo_with_cert)
    other = tmp_path / "lock.json"
    shutil.move(repo_with_cert / "preregistration.lock.json", other)
    monkeypatch.setenv("EVALKIT_PREREG_LOCK", str(other))
    res = calibrate(labels, gs, n_resamples=N_RES, root=repo_with_cert)
    assert not res.mintable and "no pre-registration lock" in res.mint_reason


def test_is_accepted_asks_the_calibrations_it_is_given(minted: dict[str, Any]) -> None:
    from evalkit.calibration import repository_calibrations
    from evalkit.record.calibration_status import is_accepted

    cert = minted["cert"]
    package = repository_calibrations()
    judge = judge_block()  # the identity that earned it (the rule judge's)
    assert is_accepted(cert.dimension_id, "uncalibrated", None, accepted=package)
    # the package's repository holds no certificate: the minted status stands only in its own
    assert not is_accepted(
        cert.dimension_id, cert.calibration_status, cert.calibration_ref, accepted=package,
        judge=judge,
    )  # fmt: skip
    accepted = accepted_calibrations(minted["repo"])
    claim = (cert.dimension_id, cert.calibration_status, cert.calibration_ref)
    assert is_accepted(*claim, accepted=accepted, judge=judge)
    assert not is_accepted(*claim, accepted=accepted)  # no judge: not the one that earned it


# --------------------------------------------------------------------------- caching


def test_a_verified_certificate_is_cached_until_an_input_changes(
    repo_with_cert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real = check_module._rescore

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append("rescore")
        return real(*args, **kwargs)

    monkeypatch.setattr(check_module, "_rescore", counting)
    path = _cert_path(repo_with_cert)
    first = verify_certificate(path, root=repo_with_cert)
    second = verify_certificate(path, root=repo_with_cert)
    assert first.entry == second.entry and len(calls) == 1  # the second read is cached
    n = len(calls)
    card = repo_with_cert / "gold" / SET / "v2" / "DATA_CARD.md"
    card.write_bytes(card.read_bytes() + b" ")
    with pytest.raises(CertificateError, match=r"DATA_CARD\.md: bytes changed"):
        verify_certificate(path, root=repo_with_cert)
    assert len(calls) == n + 1  # an edited input is re-checked, never served from the cache


def test_accepted_calibrations_is_a_frozen_value() -> None:
    acc = AcceptedCalibrations()
    with pytest.raises(AttributeError):
        acc.entries = frozenset()  # type: ignore[misc]
    assert acc.accepts("x", "uncalibrated", None) and not acc.accepts("x", "calibrated", None)


def test_the_result_says_which_labels_it_rests_on(minted: dict[str, Any]) -> None:
    result = minted["result"]
    labels = pd.DataFrame(result.labels, columns=["item_id", "label"])
    assert list(labels["item_id"]) == sorted(minted["gold"].items["item_id"])
    body = json.loads(certificate_bytes(result))
    assert [tuple(d.values()) for d in copy.deepcopy(body["labels"]["items"])] == [
        (i, lab) for i, lab in result.labels
    ]


# --------------------------------------------------------------------------- hostile certificates


def _leaves(obj: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _leaves(v, (*path, k))]
    if isinstance(obj, list) and obj:
        return [p for i, v in enumerate(obj) for p in _leaves(v, (*path, i))]
    return [path]


def _set(obj: Any, path: tuple, value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def _mutations(old: Any) -> list[Any]:
    deep: Any = 0
    for _ in range(900):
        deep = [deep]
    out: list[Any] = [None, -1, 1e308, "x", [], {}, True, deep]
    if isinstance(old, bool):
        out.append(not old)
    elif isinstance(old, int | float):
        out += [old + 1, old * (1 + 1e-6) if old else 1e-6]
    elif isinstance(old, str):
        out.append(old + "x")
    return [v for v in out if not (type(v) is type(old) and v == old)]


@pytest.mark.slow
def test_every_mutated_certificate_is_refused_never_a_traceback(repo_with_cert: Path) -> None:
    """A seeded sample of the class: one leaf of a real certificate changed (to another value,
    type, or a structure nested 900 deep), the file named after its new sha256. Each is
    refused with a reason; none is accepted, none raises anything but CertificateError."""
    real = json.loads(_cert_path(repo_with_cert).read_text(encoding="utf-8"))
    leaves = [p for p in _leaves(real) if p != ("evalkit_version",)]
    rng = np.random.default_rng(2026)
    refused = 0
    for k in rng.choice(len(leaves), size=40, replace=False):
        path = leaves[int(k)]
        old = real
        for key in path:
            old = old[key]
        options = _mutations(old)
        body = copy.deepcopy(real)
        _set(body, path, options[int(rng.integers(len(options)))])
        planted = _plant(repo_with_cert, body)
        with pytest.raises(CertificateError, match=rf"{planted.name}: refused: "):
            verify_certificate(planted, root=repo_with_cert)
        planted.unlink()
        refused += 1
    assert refused == 40


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [("n_resamples", 10**9, "n_resamples in 1..100000"), ("level", 1.5, "level must lie in"),
     ("rng", -1, "rng must be a non-negative integer"), ("level", "0.95", "wrong type")],
)  # fmt: skip
def test_a_certificate_cannot_ask_for_an_unbounded_re_check(
    repo_with_cert: Path, field: str, value: Any, message: str
) -> None:
    body = json.loads(_cert_path(repo_with_cert).read_text(encoding="utf-8"))
    body["result"]["bootstrap"][field] = value
    path = _plant(repo_with_cert, body)
    with pytest.raises(CertificateError, match=message):
        verify_certificate(path, root=repo_with_cert)


# --------------------------------------------------------------------------- re-checked on demand


def test_repository_calibrations_agree_with_the_verified_set(repo_with_cert: Path) -> None:
    from evalkit.calibration import RepositoryCalibrations

    eager = accepted_calibrations(repo_with_cert)
    lazy = RepositoryCalibrations(repo_with_cert)
    [(dim, status, ref)] = eager.entries
    claims = [
        (dim, status, ref), (dim, "uncalibrated", None), ("report-quality", status, ref),
        (dim, status, ref[:8]), (dim, status, "0" * 64), (dim, status, None),
        (dim, f"calibrated:{SET}-v1:{ref[:8]}", ref), (dim, "calibrated", ref),
    ]  # fmt: skip
    judge = judge_block()
    assert [lazy.accepts(*c, judge) for c in claims] == [eager.accepts(*c, judge) for c in claims]
    assert [lazy.accepts(*c, judge) for c in claims][:2] == [True, True]
    assert not lazy.accepts(*claims[0])  # the same claim without its judge
    path = _cert_path(repo_with_cert)
    path.write_bytes(path.read_bytes().replace(b'"n": 199', b'"n": 198', 1))
    seen: list[str] = []
    fresh = RepositoryCalibrations(repo_with_cert, on_refused=seen.append)
    assert not fresh.accepts(dim, status, ref, judge)
    assert "its name is not the sha256 of its bytes" in (fresh.why_refused(ref) or "")
    assert len(seen) == 1  # told once, however often it is asked
    assert fresh.why_refused(ref) == accepted_calibrations(repo_with_cert).why_refused(ref)


def test_a_claimed_certificate_is_re_checked_once_per_reader(
    repo_with_cert: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalkit.calibration import RepositoryCalibrations

    [(_dim, status, ref)] = accepted_calibrations(repo_with_cert).entries
    calls: list[Path] = []
    real = calibrations_module.verify_certificate

    def counting(path: Any, **kwargs: Any) -> Any:
        calls.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(calibrations_module, "verify_certificate", counting)
    path = tmp_path / "eval.jsonl"
    lines = []
    for k in range(50):
        rec = _judge_record(status, ref)
        rec["session_id"] = f"s-{k}"
        rec["run_id"] = f"s-{k}-eval-20261001T000000000Z"
        lines.append(json.dumps(rec) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    read = journal.read(path, accepted=RepositoryCalibrations(repo_with_cert))
    assert len(read.records) == 50 and len(calls) == 1


_COST = """
import json, sys
from pathlib import Path
from evalkit.journal import reader as journal
from evalkit.calibration import RepositoryCalibrations
read = journal.read(Path(sys.argv[1]), accepted=RepositoryCalibrations(Path(sys.argv[2])))
print(json.dumps([len(read.records), "scipy" in sys.modules]))
"""


@pytest.mark.slow
def test_a_journal_of_uncalibrated_judges_never_loads_a_certificate(
    repo_with_cert: Path, tmp_path: Path
) -> None:
    """With certificates in the repository, a journal that claims none of them is validated
    without re-scoring anything (no scipy import); one that claims one re-checks it."""
    import subprocess
    import sys

    from repo_layout import clean_env

    [(_dim, status, ref)] = accepted_calibrations(repo_with_cert).entries
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps(make_record()) + "\n", encoding="utf-8")
    claimed = tmp_path / "claimed.jsonl"
    claimed.write_text(json.dumps(_judge_record(status, ref)) + "\n", encoding="utf-8")

    def child(path: Path) -> list[Any]:
        code = [sys.executable, "-c", _COST, str(path), str(repo_with_cert)]
        out = subprocess.run(code, capture_output=True, text=True, env=clean_env(), check=True)
        return json.loads(out.stdout)  # type: ignore[no-any-return]

    assert child(plain) == [1, False]
    assert child(claimed) == [1, True]


def test_a_gold_set_whose_name_cannot_form_a_status_is_shown_never_minted(
    tmp_path: Path,
) -> None:
    # a gold set named with characters a status cannot carry (upper case, a space) graduates
    # and is shown; calibrate never crashes on it, and nothing can be minted for it
    repo = make_repo(tmp_path / "repo")
    odd = repo / "gold" / "Odd Set"
    shutil.copytree(repo / "gold" / SET, odd)
    manifest = odd / "v2" / "MANIFEST.json"
    body = json.loads(manifest.read_text(encoding="utf-8"))
    body["name"] = "Odd Set"  # `gold freeze` refuses such a name; a hand-made manifest has it
    body["manifest_sha256"] = gold_module._manifest_self_hash(body)
    manifest.write_bytes(gold_module._canonical_manifest(body))
    write_lock(repo)
    gs = load(odd / "v2")
    res = calibrate(rule_judge_labels(gs), gs, n_resamples=N_RES, root=repo)
    assert res.graduates and not res.mintable
    assert res.calibration_status == "uncalibrated"
    assert "does not form a valid status" in res.mint_reason
    with pytest.raises(EvalkitError, match="does not form a valid status"):
        register(res)
