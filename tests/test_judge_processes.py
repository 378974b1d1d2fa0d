"""``evalkit judge run`` as a real process: keys never leak, SIGKILL and resume, no SDK.

Each test starts the CLI as a subprocess (``python -m evalkit``) against the scripted server
on 127.0.0.1, so what is checked is what a user or the hidden check sees: the files, stdout
and stderr.
"""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from evalkit.judge.runlog import read_runlog
from evalkit.judge.scripted_server import Drop, Fail, RawBody, Reply, ScriptedServer, Stall
from evalkit.judge.scripted_server import rules_reply as rules
from tests.judge_helpers import (
    GOLD_ARG,
    N_GOLD,
    REPO_ROOT,
    clean_env,
    popen_interruptible,
    run_args,
    run_cli,
)

PROTOCOLS = ("openai", "anthropic")


def _leaky_script(key: str):
    """Every failure the key could ride out on, item by item; the rest answer normally."""
    partial = f"{key[:12]}...{key[-4:]}"  # how real APIs echo a key they reject

    def script(request):
        number = int(request.item_id.split("-")[1])
        verdict = rules(request)
        return {
            1: Fail(401, f"Incorrect API key provided: {key}"),
            2: Fail(500, f"upstream said {key}"),
            3: Fail(429, "slow down", {"retry-after": "0.1"}) if request.attempt == 0 else verdict,
            4: Stall(8.0),  # longer than the client waits (--timeout 3, one retry)
            5: RawBody(f"<html>{key}</html>".encode()),
            6: RawBody(f"plain {key}".encode(), "text/plain"),
            7: Reply(verdict.text.replace("rule 6", f"rule 6 {key}")),
            8: Drop(),
            9: Reply(verdict.text, model=f"model-{key}"),
            10: Fail(400, f"bad header Authorization: Bearer {key}"),
            11: Fail(403, f"key {partial} lacks permission"),
            12: Reply(f"x-api-key: {key}\n{verdict.text}"),
        }.get(number, verdict)

    return script


def _windows(key: str, width: int = 12) -> set[str]:
    return {key[i : i + width] for i in range(len(key) - width + 1)}


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("via", ["sdk-variable", "api-key-env"])
@pytest.mark.slow
def test_a_key_reaches_no_file_and_no_output_whatever_the_server_does(
    protocol: str, via: str, tmp_path: Path
) -> None:
    key = f"sk-evalkit-test-{secrets.token_hex(20)}"
    if via == "sdk-variable":
        name = "OPENAI_API_KEY" if protocol == "openai" else "ANTHROPIC_API_KEY"
        env, extra = clean_env(**{name: key}), []
    else:
        env, extra = clean_env(EVALKIT_JUDGE_KEY=key), ["--api-key-env", "EVALKIT_JUDGE_KEY"]
    out = tmp_path / "run.jsonl"
    with ScriptedServer(_leaky_script(key), api_key=key) as server:
        args = run_args(
            f"{protocol}:m",
            out,
            "--concurrency",
            "8",
            "--timeout",
            "3",
            "--max-retries",
            "1",
            *extra,
            url=server.base_url(protocol),
        )
        done = run_cli(args, env=env)
        sent = {server.sent_key(r) for r in server.requests}
    assert sent == {key}  # the key was really used on every request
    assert done.returncode == 4, done.stderr  # errors are recorded: calls left unanswered
    final = {e.item_id: e for e in read_runlog(out).final().values()}
    assert final["ia-001"].error_kind == "auth" and final["ia-002"].error_kind == "server-error"
    assert final["ia-003"].outcome == "ok", final["ia-003"].data  # 429, Retry-After, success
    assert final["ia-004"].error_kind == "timeout" and final["ia-008"].error_kind == "connection"
    assert final["ia-005"].error_kind == final["ia-006"].error_kind == "bad-response"
    assert final["ia-007"].outcome == "ok" and final["ia-009"].outcome == "ok"
    assert final["ia-010"].error_kind == "bad-request" and final["ia-011"].error_kind == "auth"
    assert final["ia-012"].outcome == "ok"
    texts = {"stdout": done.stdout, "stderr": done.stderr}
    texts.update({str(p): p.read_text("utf-8") for p in tmp_path.rglob("*") if p.is_file()})
    assert "REDACTED" in texts[str(out)]  # the echoes were there, and were scrubbed
    for where, text in texts.items():
        assert key not in text, where
        assert not any(w in text for w in _windows(key)), where


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.slow
def test_sigkill_mid_run_then_rerun_logs_every_item_and_repeat_exactly_once(
    protocol: str, tmp_path: Path
) -> None:
    out = tmp_path / "run.jsonl"
    concurrency = 4
    with ScriptedServer(delay=0.05) as server:
        command = run_args(
            f"{protocol}:m",
            out,
            "--repeats",
            "2",
            "--concurrency",
            str(concurrency),
            "--quiet",
            url=server.base_url(protocol),
        )
        args = [sys.executable, "-m", "evalkit", *command]
        proc = subprocess.Popen(
            args,
            cwd=REPO_ROOT,
            env=clean_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= 60:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        made = len(server.requests)
        killed = read_runlog(out)
        assert not killed.diagnostics  # whole lines only
        assert 60 <= len(killed.entries) < 2 * N_GOLD  # it really died mid-run
        # lost: at most the calls in flight, one per worker
        assert made - len(killed.entries) <= concurrency

        done = run_cli(args[3:], env=clean_env())
        assert done.returncode == 0, done.stderr
        assert f"{len(killed.entries)} already answered, skipped" in done.stderr
    log = read_runlog(out)
    assert not log.diagnostics
    keys = Counter((e.item_id, e.repeat) for e in log.entries)
    assert len(keys) == 2 * N_GOLD and set(keys.values()) == {1}
    assert all(e.outcome == "ok" for e in log.entries)


_WITHOUT_SDKS = """
import sys
sys.modules["openai"] = None  # any import of them raises ImportError
sys.modules["anthropic"] = None
from evalkit.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_evalkit_works_without_the_judges_extra_and_names_it_when_needed(
    tmp_path: Path,
) -> None:
    from evalkit.journal import reader as journal
    from tests.record_factory import make_record

    path = tmp_path / "eval.jsonl"
    journal.append(path, make_record())
    base = [sys.executable, "-c", _WITHOUT_SDKS]
    kw = {"cwd": REPO_ROOT, "env": clean_env(), "capture_output": True, "text": True}
    rules = subprocess.run([*base, "judge", "--rules", "--journal", str(path)], **kw)
    assert rules.returncode == 0 and rules.stdout.startswith("item_id,rater,label,rule")
    out = tmp_path / "run.jsonl"
    model = subprocess.run(
        [*base, "judge", "run", "--gold", GOLD_ARG, "--judge", "openai:m", "--out", str(out)],
        **kw,
    )
    assert model.returncode == 1
    assert "the openai SDK is not installed" in model.stderr
    assert "pip install 'evalkit[judges]'" in model.stderr
    assert "Traceback" not in model.stderr and not out.exists()


def test_importing_evalkit_and_its_judge_layer_does_not_import_the_sdks() -> None:
    code = (
        "import sys, evalkit.cli.main, evalkit.judge, evalkit.judge.runner, "
        "evalkit.judge.model_judge, evalkit.judge.clients\n"
        "evalkit.cli.main.build_parser()\n"
        "print(sorted(m for m in ('openai', 'anthropic') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_ctrl_c_keeps_every_finished_line_and_says_how_to_resume(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    # Calls past the 40th are held until the signal is sent: on a loaded machine a free-running
    # server could let the whole run finish before the poll below sees 20 lines.
    held = threading.Event()

    def script(request):
        if len(server.requests) > 40:
            held.wait(60)
        return rules(request)

    with ScriptedServer(script) as server:
        command = run_args("openai:m", out, "--concurrency", "4", url=server.base_url())
        proc = popen_interruptible(
            [sys.executable, "-m", "evalkit", *command],
            cwd=REPO_ROOT,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= 20:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        held.set()
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "interrupted; the same command resumes" in err and "Traceback" not in err
    log = read_runlog(out)
    assert not log.diagnostics and 20 <= len(log.entries) < N_GOLD
    assert f"{len(log.entries)} call(s) in " in err  # the summary counts what was written


def _small_disk() -> None:  # in the child, before exec: files stop growing at 120 kB
    import resource

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (120_000, 120_000))


@pytest.mark.slow
def test_a_run_log_that_cannot_grow_ends_the_run_with_exit_2_and_whole_lines(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run.jsonl"
    with ScriptedServer() as server:
        command = run_args("openai:m", out, "--quiet", url=server.base_url())
        done = subprocess.run(
            [sys.executable, "-m", "evalkit", *command],
            cwd=REPO_ROOT,
            env=clean_env(),
            capture_output=True,
            text=True,
            preexec_fn=_small_disk,
            timeout=300,
        )
        made = len(server.requests)
    assert done.returncode == 2, done.stderr
    assert "I/O error" in done.stderr and "File too large" in done.stderr
    log = read_runlog(out)
    assert not log.diagnostics  # every line whole: the failed batch was cut back
    assert 0 < len(log.entries) < N_GOLD and out.stat().st_size <= 120_000
    assert f"{len(log.entries)} call(s) in " in done.stderr  # the summary of what was written
    assert made < N_GOLD  # no new call started once the log could not be written
