"""Judged records (issue 19): judge dimensions written at record time, bound to their judge.

The whole pipeline runs as a user runs it, in a temporary copy of the repository (its own
gold sets, lock and ``calibrations/``; ``repo_layout.make_repo(package=True)``): ``judge run``
K = 3 on gold against a loopback server speaking the OpenAI or Anthropic wire protocol (the
official SDKs, real HTTP) that answers every gold item with its gold label, ``calibrate
--register``, ``score --all --journal --judge``, ``verify --all``. Then each forgery the issue
names, each of which today's code (before this change) accepted.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from repo_layout import clean_env, make_repo, run_evalkit

from evalkit.judge.adapters import prompt_item_id
from evalkit.judge.scripted_server import Reply, ScriptedServer, rules_reply
from evalkit.record.seal import seal_record

pytestmark = pytest.mark.usefixtures("no_lock_or_registry_env")

SAMPLE = Path(__file__).resolve().parents[1] / "evalkit" / "data" / "sample"
GOLD = "gold/instruction-adherence/v2"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
URLS = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")


def _env() -> dict[str, str]:
    return {k: v for k, v in clean_env().items() if k not in KEYS + URLS}


def gold_labels(repo: Path) -> dict[str, str]:
    text = (repo / GOLD / "labels.jsonl").read_text(encoding="utf-8")
    return {row["item_id"]: row["label"] for row in map(json.loads, text.splitlines())}


def reply_of(status: str, evidence: str = "gold") -> str:
    body = [{"id": "instruction-adherence", "status": status, "evidence": evidence, "score": None}]
    return f"```json\n{json.dumps(body)}\n```\n"


def gold_script(labels: dict[str, str], served: str | None = None) -> Any:
    """Answer a gold item with its gold label, anything else as the rule judge; ``served``: the
    model id the server reports (None: the one asked for)."""

    def script(request: Any) -> Any:
        item = prompt_item_id(request.prompt)
        if item in labels:
            return Reply(reply_of(labels[item]), model=served)
        reply = rules_reply(request)
        return Reply(reply.text, model=served)

    return script


def judge_dims(journal: Path) -> list[dict[str, Any]]:
    return [
        d
        for line in journal.read_text(encoding="utf-8").splitlines()
        for d in json.loads(line)["dimensions"]
        if d["method"] == "judge"
    ]


@pytest.fixture(scope="module", params=["openai", "anthropic"])
def calibrated_repo(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Iterator[Any]:
    """A repository copy whose ``calibrations/`` holds the certificate a K = 3 run of
    ``<protocol>:NAME`` earned on gold v2, and the server that answered it (still running)."""
    protocol = request.param
    tmp = tmp_path_factory.mktemp(f"judged-{protocol}")
    repo = make_repo(tmp / "repo", package=True)
    labels = gold_labels(repo)
    with ScriptedServer(gold_script(labels)) as server:
        url = server.base_url(protocol)
        run = tmp / "gold-run.jsonl"
        done = run_evalkit(
            repo, "judge", "run", "--gold", GOLD, "--judge", f"{protocol}:NAME", "--base-url", url,
            "--repeats", "3", "--concurrency", "8", "--out", str(run), "--quiet", env=_env(),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        done = run_evalkit(
            repo, "calibrate", "--labels", str(run), "--gold", GOLD, "--register",
            "--out", str(tmp / "calibration.json"), env=_env(),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        [cert] = (repo / "calibrations").glob("*.json")
        yield {"protocol": protocol, "repo": repo, "url": url, "tmp": tmp, "cert": cert,
               "labels": labels, "server": server}  # fmt: skip


#: the record is the same whichever SDK wrote it: these run on the OpenAI instance only
OPENAI_ONLY = pytest.mark.parametrize("calibrated_repo", ["openai"], indirect=True)


def _score(ctx: dict[str, Any], name: str, where: str, *extra: str) -> tuple[Any, Path]:
    metrics = ctx["tmp"] / where
    shutil.copytree(SAMPLE, metrics)
    done = run_evalkit(
        ctx["repo"], "score", "--metrics-dir", str(metrics), "--all", "--journal",
        "--judge", f"{ctx['protocol']}:{name}", "--base-url", ctx["url"], "--repeats", "3",
        "--no-progress", *extra, env=_env(),
    )  # fmt: skip
    return done, metrics


def _keep(ctx: dict[str, Any], name: str, metrics: Path) -> Path:
    """Keep a copy of ``metrics`` as just scored by ``name``, the first such (see _scored)."""
    kept: dict[str, Path] = ctx.setdefault("scored", {})
    if name not in kept:
        kept[name] = ctx["tmp"] / f"scored-{name}"
        shutil.copytree(metrics, kept[name])
    return kept[name]


def _scored(ctx: dict[str, Any], name: str, where: str) -> Path:
    """``tmp/where``: the sample ledger as ``score --judge PROTOCOL:name`` journaled it. Scored
    once per server (each score is a fresh interpreter loading an SDK); each test forges its
    own copy. The cursor stays behind: a cache naming the first copy's paths, read by no
    command these tests run but a rescore."""
    kept = ctx.get("scored", {}).get(name)
    if kept is None:
        done, metrics = _score(ctx, name, f"first-{name}")
        assert done.returncode == 0, done.stderr
        kept = _keep(ctx, name, metrics)
    copy = ctx["tmp"] / where
    shutil.copytree(kept, copy, ignore=shutil.ignore_patterns("*.cursor"))
    return copy


def _verify_all(ctx: dict[str, Any], metrics: Path) -> Any:
    return run_evalkit(
        ctx["repo"], "verify", "--all", "--metrics-dir", str(metrics), "--no-progress",
        env=_env(),
    )  # fmt: skip


@pytest.mark.slow
def test_a_calibrated_judge_writes_calibrated_dimensions_that_verify(
    calibrated_repo: dict[str, Any],
) -> None:
    ctx = calibrated_repo
    cert = json.loads(ctx["cert"].read_text(encoding="utf-8"))
    identity = cert["judge"]["identity"]
    assert identity["spec"] == f"{ctx['protocol']}:NAME" and identity["model"] == "NAME"
    assert identity["repeats"] == 3 and identity["aggregation"] == "first-labelled-call"
    assert cert["judge"]["origin"] == "model-api"
    assert cert["judge"]["base_url_host"].startswith("127.0.0.1:")
    assert "evalkit_version" not in cert  # malleable, never re-checked: dropped (issue 24 #13)

    done, metrics = _score(ctx, "NAME", "ledger")
    assert done.returncode == 0, done.stderr
    _keep(ctx, "NAME", metrics)
    dims = judge_dims(metrics / "eval.jsonl")
    assert len(dims) == 6  # one per session of the sample ledger (rubric-v2: one judge dim)
    ref = ctx["cert"].stem
    for dim in dims:
        assert dim["calibration_status"] == f"calibrated:instruction-adherence-v2:{ref[:8]}"
        assert dim["calibration_ref"] == ref
        block = dim["judge"]
        assert block["spec"] == f"{ctx['protocol']}:NAME" and block["model"] == "NAME"
        assert block["repeats"] == 3 and len(block["calls"]) == 3
        assert block["run_log"] == "eval.judge.jsonl"
    verified = _verify_all(ctx, metrics)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "6 agreement" in verified.stderr

    # a rerun asks no call twice: every session is unchanged, no call is made
    before = len((metrics / "eval.judge.jsonl").read_text(encoding="utf-8").splitlines())
    again = run_evalkit(
        ctx["repo"], "score", "--metrics-dir", str(metrics), "--all", "--journal",
        "--judge", f"{ctx['protocol']}:NAME", "--base-url", ctx["url"], "--repeats", "3",
        "--no-progress", env=_env(),
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "0 scored" in again.stderr and "6 unchanged" in again.stderr
    after = len((metrics / "eval.judge.jsonl").read_text(encoding="utf-8").splitlines())
    assert after == before == 18


@pytest.mark.slow
def test_another_model_name_or_another_served_model_is_uncalibrated_and_says_why(
    calibrated_repo: dict[str, Any],
) -> None:
    ctx = calibrated_repo
    metrics = _scored(ctx, "OTHER", "other-name")
    assert {d["calibration_status"] for d in judge_dims(metrics / "eval.jsonl")} == {"uncalibrated"}
    listing = run_evalkit(ctx["repo"], "journal", "--metrics-dir", str(metrics), env=_env())
    assert listing.returncode == 0, listing.stderr
    assert "uncalibrated" in listing.stdout and "spec" in listing.stdout  # the field that differs

    # the same name, served by another model: a silent bump is another judge
    server = ctx["server"]
    server.script = gold_script(ctx["labels"], served="NAME-2027-bump")
    try:
        done, metrics = _score(ctx, "NAME", "bumped")
    finally:
        server.script = gold_script(ctx["labels"])
    assert done.returncode == 0, done.stderr
    dims = judge_dims(metrics / "eval.jsonl")
    assert {d["calibration_status"] for d in dims} == {"uncalibrated"}
    assert {d["judge"]["model"] for d in dims} == {"NAME-2027-bump"}
    listing = run_evalkit(ctx["repo"], "journal", "--metrics-dir", str(metrics), env=_env())
    assert "model 'NAME' (this judge: 'NAME-2027-bump')" in listing.stdout
    assert _verify_all(ctx, metrics).returncode == 0


def _forge(journal: Path, change: Any) -> None:
    """Apply ``change`` to every record of the journal and reseal it, as a forger would."""
    out = []
    for line in journal.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        change(rec)
        out.append(json.dumps(seal_record(rec)))
    journal.write_text("\n".join(out) + "\n", encoding="utf-8")


@OPENAI_ONLY
@pytest.mark.slow
def test_a_resealed_changed_judge_status_is_a_drift(calibrated_repo: dict[str, Any]) -> None:
    ctx = calibrated_repo
    metrics = _scored(ctx, "OTHER", "resealed")

    def flip(rec: dict[str, Any]) -> None:
        dim = rec["dimensions"][-1]
        dim["status"] = "fail" if dim["status"] != "fail" else "pass"

    _forge(metrics / "eval.jsonl", flip)
    verified = _verify_all(ctx, metrics)
    assert verified.returncode == 1
    assert "6 drift" in verified.stderr and "verdict" in verified.stdout


@OPENAI_ONLY
@pytest.mark.slow
def test_a_missing_run_log_is_its_own_outcome_never_agreement(
    calibrated_repo: dict[str, Any],
) -> None:
    ctx = calibrated_repo
    metrics = _scored(ctx, "OTHER", "no-log")
    (metrics / "eval.judge.jsonl").unlink()
    verified = _verify_all(ctx, metrics)
    assert verified.returncode == 1
    assert "6 judge-log-missing" in verified.stderr


@OPENAI_ONLY
@pytest.mark.slow
def test_a_hand_written_calibrated_verdict_is_refused(calibrated_repo: dict[str, Any]) -> None:
    """An uncalibrated record turned `calibrated` by hand (the certificate exists, the status
    and reference are right), resealed: refused, because its judge did not earn it."""
    ctx = calibrated_repo
    metrics = _scored(ctx, "OTHER", "hand-written")
    ref = ctx["cert"].stem

    def claim(rec: dict[str, Any]) -> None:
        dim = rec["dimensions"][-1]
        judge = dim.pop("judge")
        dim["calibration_status"] = f"calibrated:instruction-adherence-v2:{ref[:8]}"
        dim["calibration_ref"] = ref
        dim["judge"] = judge

    _forge(metrics / "eval.jsonl", claim)
    listing = run_evalkit(ctx["repo"], "journal", "--metrics-dir", str(metrics), env=_env())
    assert "records   0" in listing.stdout and "is not an accepted calibration" in listing.stdout
    verified = _verify_all(ctx, metrics)
    assert verified.returncode == 1 and "6 error" in verified.stderr
    report = run_evalkit(
        ctx["repo"], "report", json.loads(
            (metrics / "eval.jsonl").read_text(encoding="utf-8").splitlines()[0])["run_id"],
        "--metrics-dir", str(metrics), "--out", str(ctx["tmp"] / "r.html"), env=_env(),
    )  # fmt: skip
    assert report.returncode == 1, report.stderr

    # the same claim with the block of the judge that earned it copied in: the log still
    # says another model answered, so verify re-derives uncalibrated
    cert = json.loads(ctx["cert"].read_text(encoding="utf-8"))

    def copy_identity(rec: dict[str, Any]) -> None:
        rec["dimensions"][-1]["judge"].update(cert["judge"]["identity"])

    _forge(metrics / "eval.jsonl", copy_identity)
    verified = _verify_all(ctx, metrics)
    assert verified.returncode == 1 and "6 drift" in verified.stderr
    assert "calibration_status" in verified.stdout or "judge" in verified.stdout


@OPENAI_ONLY
@pytest.mark.slow
def test_a_labels_file_certificate_is_named_by_no_judge(
    calibrated_repo: dict[str, Any],
) -> None:
    """The gold labels are in the repository: anyone can mint a certificate from them with no
    judge at all. It states so, and no model judge's record can carry it."""
    ctx = calibrated_repo
    repo, tmp = ctx["repo"], ctx["tmp"]
    labels = tmp / "gold-labels.csv"
    labels.write_text(
        "item_id,label\n" + "".join(f"{i},{lab}\n" for i, lab in ctx["labels"].items()),
        encoding="utf-8",
    )
    before = set((repo / "calibrations").glob("*.json"))
    done = run_evalkit(
        repo, "calibrate", "--labels", str(labels), "--gold", GOLD, "--register",
        "--out", str(tmp / "file-calibration.json"), env=_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [new] = set((repo / "calibrations").glob("*.json")) - before
    cert = json.loads(new.read_text(encoding="utf-8"))
    assert cert["judge"]["origin"] == "file" and cert["judge"]["identity"] is None
    assert cert["judge"]["source"] == "gold-labels.csv"
    assert str(tmp) not in new.read_text(encoding="utf-8")  # never a local path
    try:
        done, metrics = _score(ctx, "NAME", "file-claim")
        assert done.returncode == 0, done.stderr
        ref = new.stem

        def claim(rec: dict[str, Any]) -> None:
            dim = rec["dimensions"][-1]
            judge = dim.pop("judge")
            dim.pop("calibration_ref", None)
            dim["calibration_status"] = f"calibrated:instruction-adherence-v2:{ref[:8]}"
            dim["calibration_ref"] = ref
            dim["judge"] = judge

        _forge(metrics / "eval.jsonl", claim)
        listing = run_evalkit(repo, "journal", "--metrics-dir", str(metrics), env=_env())
        assert "records   0" in listing.stdout
    finally:
        new.unlink()


@OPENAI_ONLY
@pytest.mark.slow
def test_a_run_log_whose_status_disagrees_with_its_reply_is_refused(
    calibrated_repo: dict[str, Any],
) -> None:
    ctx = calibrated_repo
    repo, tmp = ctx["repo"], ctx["tmp"]
    rows = [json.loads(x) for x in (tmp / "gold-run.jsonl").read_text("utf-8").splitlines()]
    # a judge that did badly "repaired" in its log: a status no reply gave
    rows[0]["status"] = "fail" if rows[0]["status"] != "fail" else "pass"
    edited = tmp / "edited-run.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    done = run_evalkit(repo, "calibrate", "--labels", str(edited), "--gold", GOLD, env=_env())
    assert done.returncode == 1
    assert "is not what its reply reads as" in done.stderr
    replay = run_evalkit(
        repo, "judge", "run", "--gold", GOLD, "--judge", f"replay:{edited}",
        "--out", str(tmp / "replayed.jsonl"), "--quiet", env=_env(),
    )  # fmt: skip
    assert replay.returncode == 4, replay.stderr  # that call is unanswered: refused, no label
    replayed = [json.loads(x) for x in (tmp / "replayed.jsonl").read_text("utf-8").splitlines()]
    assert len(replayed) == 597  # every repeat of the log, without --repeats
    bad = [r for r in replayed if r["outcome"] == "error"]
    assert len(bad) == 1 and bad[0]["error"]["kind"] == "replay-mismatch"


def test_the_certificate_s_run_log_hash_names_the_log(calibrated_repo: dict[str, Any]) -> None:
    ctx = calibrated_repo
    cert = json.loads(ctx["cert"].read_text(encoding="utf-8"))
    data = (ctx["tmp"] / "gold-run.jsonl").read_bytes()
    assert cert["judge"]["run_log_sha256"] == hashlib.sha256(data).hexdigest()


def _explorer_judge_fields(ctx: dict[str, Any], metrics: Path) -> list[dict[str, str]]:
    """The (key -> text) fields the explorer page carries for each judge dimension."""
    page = ctx["tmp"] / f"{metrics.name}-explore.html"
    done = run_evalkit(
        ctx["repo"], "explore", "--metrics-dir", str(metrics), "--no-verify", "--out", str(page),
        env=_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page.read_text(encoding="utf-8")
    found = re.search(
        r'<script type="application/json" id="explorer-data">(.*?)</script>', html, re.S
    )
    assert found is not None
    data = json.loads(found.group(1))
    judged = {i for i, d in enumerate(data["dims"]) if d["method"] == "judge"}
    return [
        dict(data["values"][dim[3]])
        for row in data["records"]
        for dim in row[5]
        if dim[0] in judged
    ]


@OPENAI_ONLY
@pytest.mark.slow
def test_the_explorer_names_each_judge_dimension_s_judge_and_why_it_is_calibrated(
    calibrated_repo: dict[str, Any],
) -> None:
    ctx = calibrated_repo
    ref = ctx["cert"].stem
    metrics = _scored(ctx, "NAME", "explored")
    fields = _explorer_judge_fields(ctx, metrics)
    assert len(fields) == 6
    for got in fields:
        assert got["judge"] == "openai:NAME, model reported NAME"
        labels = "(pass|fail|cannot-determine)"
        assert re.fullmatch(
            rf"K = 3 \(first-labelled-call\): r0: {labels}, r1: {labels}, r2: {labels}",
            got["calls"],
        ), got["calls"]
        assert got["run log"] == "eval.judge.jsonl"
        assert got["calibration_status"] == f"calibrated:instruction-adherence-v2:{ref[:8]}"
        assert (
            f"certificate calibrations/{ref}.json re-checked: earned by this judge"
            in (got["calibration"])
        )
        assert "line_sha256" not in " ".join(got.values())  # the raw block is not dumped

    metrics = _scored(ctx, "OTHER", "explored-other")
    for got in _explorer_judge_fields(ctx, metrics):
        assert got["judge"] == "openai:OTHER, model reported OTHER"
        assert got["calibration_status"] == "uncalibrated"
        assert "the nearest" in got["calibration"] and "model 'NAME'" in got["calibration"]
