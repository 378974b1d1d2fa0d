"""Parameters are JSON values, checked all the way down, and reach the kernel as themselves.

Finding 6 of issue 10: ``study run NAME -f params.yaml`` executed code in the kernel, because a
list element tagged ``!!binary`` or ``!!set`` reached papermill's last-resort translation
``"{str(v)}"`` unescaped. The runner now refuses every value JSON cannot hold (naming its path)
and writes the values into the notebook itself as literals it proves read back as themselves.
"""

from __future__ import annotations

import ast
import base64
import datetime as dt
import enum
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit.cli.main import main
from evalkit.errors import EvalkitError
from evalkit.prereg.lock import LOCK_ENV, write_lock
from evalkit.prereg.study_params import (
    MAX_VALUES,
    injected_source,
    json_value,
    load_parameters_file,
    python_literal,
)
from evalkit.studies import run as studies
from tests.toy_notebooks import toy_notebook


def hostile(mark: Path) -> str:
    """A string that breaks out of every naive quoting (quotes, triple quotes, backslashes,
    newlines, a NUL, a format brace, a lone surrogate) around code that would create ``mark``."""
    code = f"__import__('pathlib').Path({str(mark)!r}).touch()"
    return (
        'a"b\'c"""d\'\'\'e\\\\f\\"g\nh\r\ni\x00j\u2028k{0}{x}\ud800 '
        f'"; {code}; " """; {code}; """ \'\'\'; {code}; \'\'\' \\'
    )


HOSTILE = hostile(Path("/nonexistent/MARK"))


# --------------------------------------------------------------------------- json_value


class _Colour(enum.IntEnum):
    RED = 1


class _EvilStr(str):
    def __repr__(self) -> str:
        return "__import__('os').system('true')"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"thresholds": [1, 2, b"x"]}, r"^thresholds\[2\]: a bytes value is not a JSON value"),
        ({"t": [1, {2, 3}]}, r"^t\[1\]: a set value is not a JSON value"),
        ({"t": (1, 2)}, r"^t: a tuple value"),
        ({"d": dt.date(2026, 1, 1)}, r"^d: a date value"),
        ({"d": dt.datetime(2026, 1, 1)}, r"^d: a datetime value"),
        ({"x": math.nan}, r"^x: nan is not a JSON value"),
        ({"x": [0, -math.inf]}, r"^x\[1\]: -inf is not a JSON value"),
        ({"cfg": {"a b": {1: 2}}}, r'^cfg\["a b"\]: key 1 \(int\) is not a string'),
        ({"cfg": {"a": [[object()]]}}, r"^cfg\.a\[0\]\[0\]: a object value"),
        ({"f": print}, r"^f: a builtin_function_or_method value"),
    ],
)
def test_a_value_json_cannot_hold_is_refused_with_its_path(value: Any, message: str) -> None:
    with pytest.raises(EvalkitError, match=message):
        json_value(value)


def test_subclasses_come_back_as_the_plain_type() -> None:
    out = json_value({"c": _Colour.RED, "s": _EvilStr("x"), "b": True, "n": None})
    assert out == {"c": 1, "s": "x", "b": True, "n": None}
    assert type(out["c"]) is int and type(out["s"]) is str
    assert python_literal(out["s"]) == "'x'"  # str's repr, never the subclass's


def test_cycles_depth_and_alias_bombs_are_refused_quickly() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(EvalkitError, match=r"^x\[0\]: a value that contains itself"):
        json_value({"x": loop})
    deep: list[Any] = []
    cur = deep
    for _ in range(200):
        cur.append([])
        cur = cur[0]
    with pytest.raises(EvalkitError, match="nested deeper than 64 levels"):
        json_value(deep, "d")
    shared: list[Any] = ["x"] * 10
    for _ in range(8):  # 10**9 leaves through shared references (a YAML alias bomb)
        shared = [shared] * 10
    start = time.monotonic()
    with pytest.raises(EvalkitError, match=f"more than {MAX_VALUES} values"):
        json_value(shared, "bomb")
    assert time.monotonic() - start < 5


# --------------------------------------------------------------------------- YAML files


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("thresholds: [1, 3, !!binary aGVsbG8=]\n",
         r"thresholds\[2\]: a YAML !!binary value \(line 1\) is not a JSON value"),
        ("thresholds: !!set {1: null, 2: null}\n", r"thresholds: a YAML !!set value"),
        ("x: !!python/object/apply:os.system ['true']\n",
         r"x: a YAML !!python/object/apply:os.system value"),
        ("x: !!python/name:os.system\n", r"x: a YAML !!python/name:os.system value"),
        ("when: 2026-01-01\n", r"when: a YAML !!timestamp value"),
        ("when: 2026-01-01T10:00:00Z\n", r"when: a YAML !!timestamp value"),
        ("x: !!omap [a: 1]\n", r"x: a YAML !!omap value"),
        ("x: !custom 1\n", r"x: a YAML !custom value"),
        ("ceiling: .nan\n", r"ceiling: nan is not a JSON value"),
        ("ceiling: [.inf]\n", r"ceiling\[0\]: inf is not a JSON value"),
        ("cfg: {1: a}\n", r"cfg: key 1 \(int\) is not a string"),
        ("cfg: {? !!binary aGk=: a}\n", r"cfg: key \(a YAML !!binary value"),
        ("a: &a [*a]\n", r"a\[0\]: a value that contains itself"),
        ("ceiling: 0.1\nceiling: 0.2\n", r"line 2: key 'ceiling' is given twice"),
        ("- 1\n- 2\n", "expected a mapping of parameter names"),
        ("a: [\n", "not valid YAML"),
        ("n: " + "9" * 5000 + "\n", "unreadable value"),
    ],
)  # fmt: skip
def test_a_parameters_file_holds_only_json_values(tmp_path: Path, text: str, message: str) -> None:
    path = _yaml(tmp_path, text)
    with pytest.raises(EvalkitError, match=message) as err:
        load_parameters_file(path)
    assert str(path) in str(err.value)


def test_a_yaml_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 9):
        refs = ",".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    path = _yaml(tmp_path, "\n".join(lines) + "\n")
    start = time.monotonic()
    with pytest.raises(EvalkitError, match="more than"):
        load_parameters_file(path)
    assert time.monotonic() - start < 10


def test_plain_yaml_and_json_files_load_as_json_values(tmp_path: Path) -> None:
    path = _yaml(tmp_path, "thresholds: [1, 2.5]\nfact: guard_blocked\nflag: yes\nnone: ~\n")
    assert load_parameters_file(path) == {
        "thresholds": [1, 2.5],
        "fact": "guard_blocked",
        "flag": True,
        "none": None,
    }
    path.write_text(json.dumps({"a": {"b": ["c"]}}), encoding="utf-8")
    assert load_parameters_file(path) == {"a": {"b": ["c"]}}


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "too-large", "bad-utf8"])
def test_a_parameters_file_that_is_no_regular_file_is_refused_never_a_hang(
    tmp_path: Path, kind: str
) -> None:
    path = tmp_path / "p.yaml"
    expect = {
        "fifo": "FIFO",
        "device": "character device",
        "directory": "is a directory",
        "too-large": "cap",
        "bad-utf8": "invalid UTF-8",
    }[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "directory":
        path = tmp_path
    elif kind == "too-large":
        path.write_bytes(b"a: 1\n" + b"#" * (17 << 20))
    else:
        path.write_bytes(b"a: \xff\n")
    # in a child process with a deadline: a reader that blocked would fail here, not hang
    code = (
        "import sys\nfrom evalkit.prereg.study_params import load_parameters_file\n"
        "try:\n    load_parameters_file(sys.argv[1])\nexcept ValueError as e:\n"
        "    print(e)\n    sys.exit(3)\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 3, res.stderr
    assert expect in res.stdout and "Traceback" not in res.stderr


# --------------------------------------------------------------------------- literals


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from(["\ud800", "x\udfff", HOSTILE]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=_json)
@pytest.mark.slow
def test_every_json_value_is_written_as_a_literal_that_reads_back_as_itself(value: Any) -> None:
    source = injected_source({"p": value, "q": HOSTILE})
    tree = ast.parse(source)
    assert [type(node) for node in tree.body] == [ast.Assign, ast.Assign]
    back = ast.literal_eval(tree.body[0].value)  # type: ignore[attr-defined]
    assert json.dumps(back, sort_keys=True) == json.dumps(value, sort_keys=True)
    assert ast.literal_eval(tree.body[1].value) == HOSTILE  # type: ignore[attr-defined]


def test_python_literal_refuses_anything_but_plain_json() -> None:
    for bad in (b"x", {1, 2}, (1,), math.nan, object()):
        with pytest.raises(EvalkitError):
            python_literal(bad)
    with pytest.raises(EvalkitError, match="not a Python identifier"):
        injected_source({"a b": 1})


# --------------------------------------------------------------------------- through the kernel


@pytest.fixture
def toy_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A toy study under the registered name ``rubric-replay``, locked in its own lock; its
    kernel writes every value it received into the results (and any mark into MARK)."""
    toy_notebook(
        tmp_path / "notebooks" / "rubric-replay.ipynb",
        'text: str = ""\nitems: list = []\nmapping: dict = {}\nthresholds: list = [1]',
        "from evalkit import analyses\n"
        "analyses.write_results({'got': {'text': text, 'items': items, 'mapping': mapping,"
        " 'thresholds': thresholds}})",
    )
    monkeypatch.setenv("EVALKIT_NOTEBOOKS", str(tmp_path / "notebooks"))
    write_lock(tmp_path / "lock.json", tmp_path, kinds=["study"])
    monkeypatch.setenv(LOCK_ENV, str(tmp_path / "lock.json"))
    return tmp_path


@pytest.mark.notebook
def test_finding_6_binary_and_set_in_a_yaml_file_never_reach_the_kernel(
    toy_study: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the old code both files executed ``touch`` in the kernel (papermill's str(v))."""
    mark = toy_study / "PWNED"
    payload = f'x" + str(__import__("pathlib").Path("{mark}").touch()) + "'.encode()
    binary = toy_study / "binary.yaml"
    binary.write_text(f"thresholds: [1, !!binary {base64.b64encode(payload).decode()}]\n")
    as_set = toy_study / "set.yaml"
    as_set.write_text("thresholds: [1, !!set {'" + payload.decode() + "': null}]\n")
    for path, where in ((binary, r"thresholds[1]: a YAML !!binary value"),
                        (as_set, "thresholds[1]: a YAML !!set value")):  # fmt: skip
        rc = main(["study", "run", "rubric-replay", "-f", str(path), "--out", str(toy_study / "o")])
        err = capsys.readouterr().err
        assert rc == 1 and where in err and str(path) in err
        assert not mark.exists()
    assert not (toy_study / "o" / "results.json").exists()  # refused before any kernel


@pytest.mark.notebook
def test_hostile_strings_arrive_in_the_kernel_as_the_same_strings(toy_study: Path) -> None:
    mark = toy_study / "MARK"
    bad = hostile(mark)
    values = {
        "text": bad,
        "items": [bad, "'''", '"""', "\\", {"k": "\\'"}],
        "mapping": {bad: bad, "": [None, True, 1.5e300, -0.0]},
        "thresholds": [1],
    }
    why = "values chosen to break quoting"  # every toy parameter is design: a stated deviation
    run = studies.run_study("rubric-replay", values, out_dir=toy_study / "out", deviation=why)
    assert run.ok, run.error
    assert run.results["got"] == json.loads(json.dumps(values))
    assert not mark.exists()
    # the same through the command line: -f YAML and -p
    yaml_file = toy_study / "hostile.yaml"
    yaml_file.write_text(json.dumps({"text": bad}), encoding="utf-8")
    rc = main(["study", "run", "rubric-replay", "-f", str(yaml_file), "-p", "items",
               json.dumps([bad]), "--out", str(toy_study / "cli"), "--deviation", why])  # fmt: skip
    assert rc == 0
    got = json.loads((toy_study / "cli" / "results.json").read_text(encoding="utf-8"))["got"]
    assert got["text"] == bad and got["items"] == [bad]
    assert not mark.exists()


def test_command_line_json_is_strict() -> None:
    for raw in ("[NaN]", "[1, Infinity]", "[" * 3000 + "]" * 3000):
        with pytest.raises(EvalkitError, match="'thresholds' expects list"):
            studies.coerce_cli_value("threshold-study", "thresholds", raw)
    with pytest.raises(EvalkitError, match="'ceiling' expects float"):
        studies.coerce_cli_value("threshold-study", "ceiling", "nan")


# ------------------------------------------------------------ roles: input, execution, design


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("metrics_dir", "input"),
        ("labels_path", "input"),
        ("metrics_dirs", "input"),  # a fleet: several directories (issue 15)
        ("labels_paths", "input"),
        ("scheduler", "execution"),  # where it runs, named one by one
        ("ceiling", "design"),
        ("schedule", "design"),  # only the names the rule lists are execution settings
        ("dirs", "design"),
        ("scheduler_seed", "design"),
    ],
)
def test_every_parameter_has_one_role_by_name(name: str, role: str) -> None:
    from evalkit.prereg.study_params import Parameter, design_of, parameter_role

    assert parameter_role(name) == role
    assert Parameter(name, "str", "").role == role
    # the design the lock freezes is exactly the design-role parameters
    assert (name in design_of({name: "x"})) is (role == "design")


def test_a_fleet_parameter_takes_a_list_or_a_glob_from_the_command_line() -> None:
    coerce = studies.coerce_cli_value
    assert coerce("rubric-replay", "metrics_dirs", '["a/m", "b/m"]') == ["a/m", "b/m"]
    assert coerce("rubric-replay", "metrics_dirs", "repos/*/metrics") == "repos/*/metrics"
    # a glob character class is a glob, not broken JSON; a JSON string is the text as given
    assert coerce("rubric-replay", "metrics_dirs", "[ab]*/metrics") == "[ab]*/metrics"
    # a scheduler runs code in the kernel: only --scheduler names one (issue 24, finding 1)
    with pytest.raises(EvalkitError, match="comes only from the command line"):
        coerce("threshold-study", "scheduler", "tcp://127.0.0.1:8786")
    declared = studies.declared_parameters("rubric-replay")
    assert declared["metrics_dirs"].type == "list | str" and declared["metrics_dirs"].default == []
    # strict JSON still: "[NaN]" is no list (never a NaN value), so it stays text, a pattern
    assert coerce("rubric-replay", "metrics_dirs", "[NaN]") == "[NaN]"
