"""Issue 24, findings 1 and 2: network peers that run code come only from the command line.

Finding 1: a study's ``scheduler`` parameter came from ``-f params.yaml`` (or ``-p``) outside the
lock, and the kernel connected to it: a Dask client trusts its scheduler with pickle, so a
colleague's parameters file ran code in the kernel. Now ``scheduler`` is never a parameter from
files, ``-p`` or a mapping: only ``study run --scheduler`` (``run_study(..., scheduler=...)``)
names one, the help says what that trusts, and the page says where the run computed and that
the scheduler was trusted. ``score --all --fleet --scheduler`` says the same on stderr.

Finding 2: ``score --all --fleet --workers N`` started a scheduler any local user could connect
to and run code in evalkit's workers. The clusters evalkit starts now speak mutual TLS with a
key made for the run (``distributed.Security.temporary()``) and start no dashboard: a client
without that key is refused by the scheduler and by every worker. Dask runs in child
processes here (no Dask threads in pytest's process, see ``tests/test_cli_fleet.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import IN_CI, REPO_ROOT

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.studies import run as studies

PEER = "tcp://127.0.0.1:9"  # nothing is ever started there


# ------------------------------------------------------------- finding 1: no peer from files


@pytest.mark.parametrize("study", ["rubric-replay", "threshold-study"])
def test_a_scheduler_from_a_parameters_file_p_or_a_mapping_is_refused_before_any_kernel(
    study: str, tmp_path: Path, kernel_calls: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(f'scheduler: "{PEER}"\nmetrics_dirs: ["{tmp_path}"]\n', encoding="utf-8")
    for argv in (["-f", str(params)], ["-p", "scheduler", PEER]):
        assert main(["study", "run", study, *argv, "--out", str(tmp_path / "out")]) == 1
        err = capsys.readouterr().err
        assert "parameter 'scheduler' names a network peer, which comes only from the command " in (
            err
        )
        assert "line (--scheduler ADDRESS" in err and "runs code in the process" in err
    with pytest.raises(EvalkitError, match="comes only from the command line"):
        studies.run_study(study, {"scheduler": PEER}, out_dir=tmp_path / "api")
    assert kernel_calls == []
    assert not (tmp_path / "out").exists() and not (tmp_path / "api").exists()


def test_the_help_and_the_page_say_what_a_named_scheduler_is_trusted_with(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from evalkit.prereg.study_params import notebook_parameters
    from evalkit.studies.lock import check_study

    with pytest.raises(SystemExit):
        main(["study", "run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--scheduler ADDRESS" in help_text and "never from -p or -f" in help_text
    assert "runs code in the process that connects to it" in help_text
    declared = notebook_parameters(REPO_ROOT / "notebooks" / "rubric-replay.ipynb")
    merged = {p.name: p.default for p in declared.values()}
    for scheduler, said in (
        ("", "Computed in the kernel: no scheduler was named."),
        (PEER, f"Computed on the Dask scheduler `{PEER}`, named on the command line"),
    ):
        status = check_study(
            "rubric-replay", declared, {**merged, "scheduler": scheduler}, set(), "0" * 64,
            no_lock=True,
        )  # fmt: skip
        assert said in status.banner()
        assert status.to_json()["scheduler"] == (scheduler or None)
    assert "which was trusted: a Dask scheduler runs code" in status.banner()


def test_a_notebook_default_names_no_scheduler_either(
    tmp_path: Path, kernel_calls: list[Any]
) -> None:
    from tests.toy_notebooks import toy_notebook

    notebook = toy_notebook(tmp_path / "ad-hoc.ipynb", f'scheduler: str = "{PEER}"  # where', "1")
    with pytest.raises(EvalkitError, match="an execution setting's default must be"):
        studies.run_study(str(notebook), {}, out_dir=tmp_path / "out", no_lock=True)
    assert kernel_calls == []


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *argv],
        capture_output=True, text=True, timeout=300, cwd=REPO_ROOT, check=False,
        env={"PATH": "/usr/bin:/bin", "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"},
    )  # fmt: skip


def _needs_dask() -> None:
    import importlib.util

    if importlib.util.find_spec("distributed") is None:  # pragma: no cover
        if IN_CI:
            pytest.fail("dask is not installed (the Makefile installs the fleet extra)")
        pytest.skip("dask is not installed (pip install 'evalkit[fleet]')")


@pytest.mark.slow
def test_score_fleet_on_a_named_scheduler_says_what_it_trusts(tmp_path: Path) -> None:
    _needs_dask()
    from evalkit.simulate import simulate_metrics_dir

    metrics = tmp_path / "metrics"
    simulate_metrics_dir(metrics, n_sessions=3, seed=3, score=False)
    done = _cli("score", "--all", "--fleet", str(metrics), "--scheduler", PEER, "--no-progress")
    assert done.returncode == 2, done.stderr  # nothing listens there
    first = done.stderr.splitlines()[0]
    assert first.startswith(f"evalkit score: --scheduler {PEER}: a Dask scheduler runs code in ")


# ------------------------------------------------------ finding 2: the clusters evalkit starts

_INTRUDER = textwrap.dedent(
    """
    import asyncio, json, os, socket, ssl, sys
    import dask.distributed as dd
    from evalkit.fleet.score import fleet_client

    async def run_there(target):
        # a worker runs the function a "run" message carries (the scheduler: "run_function")
        from distributed.core import rpc
        from distributed.protocol.pickle import dumps

        async with rpc(target) as peer:
            answer = await asyncio.wait_for(peer.run(function=dumps(os.getuid)), 5)
        return answer

    def intrude(address):
        # what another local user can do: send a function, connect a client, shake hands
        plain = address.replace("tls://", "tcp://")
        for target in (plain, address):
            try:
                return f"ran code at {target}: {asyncio.run(run_there(target))}"
            except Exception:  # refused, as it must be
                pass
            try:
                with dd.Client(target, timeout="3s") as c:
                    return f"connected to {target}: uid {c.run_on_scheduler(os.getuid)}"
            except Exception:  # refused, as it must be
                pass
        host, port = address.split("://")[1].rsplit(":", 1)
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        try:
            with socket.create_connection((host, int(port)), timeout=3) as raw:
                with ctx.wrap_socket(raw) as tls:
                    tls.sendall(b"x")
                    if tls.recv(1):
                        return "the peer answered a client without a certificate"
        except (OSError, ssl.SSLError):
            pass
        return None

    def http(port):
        # the HTTP port is not behind TLS: it may answer a health check, and show nothing
        import urllib.error, urllib.request
        out = {}
        for path in ("/health", "/json/identity.json", "/info/main/workers.html", "/metrics"):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=3) as r:
                    out[path] = r.status
            except urllib.error.HTTPError as exc:
                out[path] = exc.code
        return out

    if __name__ == "__main__":
        with fleet_client(workers=1) as client:
            info = client.scheduler_info()
            nannies = [w.get("nanny") for w in info["workers"].values()]
            addresses = [client.scheduler.address, *info["workers"], *filter(None, nannies)]
            print(json.dumps({
                "addresses": addresses,
                "http": http(info["services"]["dashboard"]),
                "intrusions": [intrude(a) for a in addresses],
                "own": client.submit(sum, [1, 2], pure=False).result(),
            }), flush=True)
    """
)


@pytest.mark.slow
def test_a_local_cluster_evalkit_starts_refuses_every_client_but_its_own(tmp_path: Path) -> None:
    _needs_dask()
    script = tmp_path / "intruder.py"  # a file: spawned workers re-import the main module
    script.write_text(_INTRUDER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300,
        cwd=REPO_ROOT, check=False, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert len(seen["addresses"]) == 3  # the scheduler, the worker, the worker's nanny
    assert all(a.startswith("tls://127.0.0.1:") for a in seen["addresses"]), seen
    assert seen["intrusions"] == [None, None, None], seen  # none of them runs a stranger's code
    assert seen["http"] == {  # a health check, and nothing about the tasks or the workers
        "/health": 200, "/json/identity.json": 404, "/info/main/workers.html": 404, "/metrics": 404,
    }  # fmt: skip
    assert seen["own"] == 3  # and its own client computes
