"""Study parameters: declared in a notebook cell, JSON values all the way down, injected safely.

A study notebook declares its parameters in the one code cell tagged ``parameters``, one
``name: type = literal  # help`` line each. Three kinds of parameter (one rule, by name):

* **data inputs**: a name ending in ``_dir`` or ``_path`` (one path: ``metrics_dir``,
  ``labels_path``, ``gold_path``) or in ``_dirs`` or ``_paths`` (several: ``metrics_dirs``, a
  list of paths or a glob). They say *which data* a run reads; they may be overridden freely,
  and the runner records the sha256 of their content.
* **execution settings**: the names in :data:`EXECUTION_PARAMETERS` (``scheduler``: the
  address of the Dask scheduler a fleet runs on). They say *where* a run computes, never
  *what*: the results are the same wherever it runs. A scheduler runs code in the kernel, so
  it is named only on the command line (``study run --scheduler``), never by ``-p``, a
  parameters file or a notebook default (``evalkit.studies.run``); the page names it.
* **design**: every other parameter (thresholds, ceiling, resamples, seeds, the fact, the
  judge...). The pre-registration lock freezes the design (:mod:`evalkit.prereg.lock`).

A parameter's type is one of :data:`TYPES`; ``list | str`` takes either (a fleet named by a
list of paths or by one glob).

Every value a run uses, from the notebook's defaults, ``-p``, ``-f params.yaml`` or an API
caller, must be a JSON value (null, true/false, an int, a finite float, a string, a list, an
object with string keys), checked recursively by :func:`json_value`; the offending value is named
by its path (``thresholds[2]: a YAML !!binary value is not a JSON value``). The runner then
writes the values into the notebook itself as Python literals (:func:`injected_source`), and
proves before any kernel starts that the cell is nothing but ``name = literal`` lines whose
literals read back as the same values. Papermill's own translation (whose last resort
``"{str(v)}"`` executes a crafted value) is never used.

Standard library only (``yaml`` is imported when a YAML file is read).
"""

from __future__ import annotations

import ast
import hashlib
import json
import keyword
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.errors import EvalkitError
from evalkit.files.input import escape_surrogates, own_cap, parse_json, read_text

__all__ = [
    "EXECUTION_PARAMETERS",
    "INPUT_SUFFIXES",
    "MAX_DEPTH",
    "MAX_VALUES",
    "PARAMETERS_FILE_MAX_BYTES",
    "TYPES",
    "Parameter",
    "canonical_json",
    "design_of",
    "design_sha256",
    "injected_source",
    "is_design_parameter",
    "is_execution_parameter",
    "is_input_parameter",
    "json_document",
    "json_value",
    "load_parameters_file",
    "notebook_parameters",
    "parameter_role",
    "parameters_cell",
    "parse_parameters",
    "python_literal",
    "read_notebook",
    "type_ok",
]

#: A parameter whose name ends with one of these is a data input, not design: one path
#: (``_dir``, ``_path``) or several (``_dirs``, ``_paths``: a list of paths, or a glob).
INPUT_SUFFIXES: tuple[str, ...] = ("_dir", "_path", "_dirs", "_paths")
#: Execution settings, named one by one: where a run computes, never what it computes, so
#: neither design nor data. ``scheduler``: a Dask scheduler address ("" = in the kernel).
EXECUTION_PARAMETERS: frozenset[str] = frozenset({"scheduler"})
#: Deepest nesting of lists/objects a parameter value may have.
MAX_DEPTH = 64
#: Most values (counting every element, repeats of a YAML alias included) one check walks.
MAX_VALUES = 100_000
#: A parameters file larger than this is refused (parameter files are a few lines).
PARAMETERS_FILE_MAX_BYTES = 16 << 20

TYPES: dict[str, type | tuple[type, ...]] = {
    "str": str,
    "int": int,
    "float": (int, float),
    "bool": bool,
    "list": list,
    "dict": dict,
    "list | str": (list, str),
}


@dataclass(frozen=True)
class Parameter:
    """One declared notebook parameter."""

    name: str
    type: str  # one of TYPES
    default: Any
    help: str = ""

    @property
    def is_input(self) -> bool:
        """A data input (free to override), not part of the pre-registered design."""
        return is_input_parameter(self.name)

    @property
    def role(self) -> str:
        """``input``, ``execution`` or ``design`` (:func:`parameter_role`)."""
        return parameter_role(self.name)

    def __getitem__(self, key: str) -> Any:
        # papermill.inspect_notebook's dict shape, for callers written against it
        if key == "inferred_type_name":
            return self.type
        if key in ("name", "type", "default", "help"):
            return getattr(self, key)
        raise KeyError(key)


def is_input_parameter(name: str) -> bool:
    """True for a data-input parameter (``*_dir``, ``*_path``, ``*_dirs``, ``*_paths``)."""
    return name.endswith(INPUT_SUFFIXES)


def is_execution_parameter(name: str) -> bool:
    """True for an execution setting (:data:`EXECUTION_PARAMETERS`): neither design nor data."""
    return name in EXECUTION_PARAMETERS


def is_design_parameter(name: str) -> bool:
    """True for a design parameter: what the pre-registration lock freezes."""
    return not (is_input_parameter(name) or is_execution_parameter(name))


def parameter_role(name: str) -> str:
    """``input`` (data), ``execution`` (where it runs) or ``design`` (what the lock freezes)."""
    if is_input_parameter(name):
        return "input"
    return "execution" if is_execution_parameter(name) else "design"


# --------------------------------------------------------------------------------------------
# JSON values


class _NotJson:
    """What the YAML reader builds for a tag JSON cannot hold (``!!binary``, ``!!set``...)."""

    __slots__ = ("line", "tag")

    def __init__(self, tag: str, line: int) -> None:
        self.tag = tag
        self.line = line

    def describe(self) -> str:
        short = _tag_name(self.tag)
        return f"a YAML {short} value (line {self.line}) is not a JSON value"


def _tag_name(tag: str) -> str:
    """``tag:yaml.org,2002:binary`` -> ``!!binary``; other tags as written."""
    prefix = "tag:yaml.org,2002:"
    return "!!" + tag[len(prefix) :] if tag.startswith(prefix) else tag


def _child(where: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{where}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{where}.{key}" if where else key
    return f"{where}[{json.dumps(key)}]"


def _refuse(where: str, what: str) -> EvalkitError:
    return EvalkitError(f"{escape_surrogates(where or 'value')}: {what}")


def _why_not_json(value: Any) -> str:
    if isinstance(value, _NotJson):
        return value.describe()
    if isinstance(value, float):
        return f"{value!r} is not a JSON value (JSON numbers are finite)"
    if isinstance(value, bytes | bytearray):
        return "a bytes value is not a JSON value"
    kind = type(value).__name__
    return (
        f"a {kind} value is not a JSON value (parameters hold null, true/false, numbers, "
        "strings, lists and objects with string keys)"
    )


def json_value(value: Any, where: str = "") -> Any:
    """``value`` as plain JSON-shaped Python (exact ``str/int/float/bool/None/list/dict``).

    Refuses (``EvalkitError`` naming ``where`` and the path inside, e.g. ``thresholds[2]``)
    anything else: bytes, sets, dates, YAML-only tags, NaN/infinity, non-string keys, a
    value that contains itself, nesting deeper than :data:`MAX_DEPTH` or more than
    :data:`MAX_VALUES` values. Subclasses (an ``IntEnum``, a ``str`` subclass with its own
    ``repr``) come back as the plain type, so nothing downstream can run their methods.
    """
    budget = [MAX_VALUES]
    return _plain(value, where, 0, budget, set())


def _plain(value: Any, where: str, depth: int, budget: list[int], active: set[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _refuse(where, f"more than {MAX_VALUES} values in one parameter (YAML aliases?)")
    if value is None or value is True or value is False:
        return value
    if isinstance(value, bool):  # a bool subclass (numpy.bool_ is not one, but be exact)
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _refuse(where, _why_not_json(value))
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list | dict):
        if depth >= MAX_DEPTH:
            raise _refuse(where, f"nested deeper than {MAX_DEPTH} levels")
        if id(value) in active:
            raise _refuse(where, "a value that contains itself (a recursive YAML alias)")
        active.add(id(value))
        try:
            if isinstance(value, list):
                return [
                    _plain(v, _child(where, i), depth + 1, budget, active)
                    for i, v in enumerate(value)
                ]
            out: dict[str, Any] = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    raise _refuse(
                        where,
                        f"key {_shown_key(k)} is not a string (JSON object keys are strings)",
                    )
                out[str(k)] = _plain(v, _child(where, str(k)), depth + 1, budget, active)
            return out
        finally:
            active.discard(id(value))
    raise _refuse(where, _why_not_json(value))


def _shown_key(key: Any) -> str:
    if isinstance(key, _NotJson):
        return f"({key.describe()})"
    return f"{escape_surrogates(repr(key))} ({type(key).__name__})"


def canonical_json(value: Any) -> str:
    """One spelling of a JSON value: sorted keys, no spaces, UTF-8 (lone surrogates escaped)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return text  # ensure_ascii (default): every string is written as pure ASCII


def design_sha256(design: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of a study's design (its design parameters' values)."""
    return hashlib.sha256(canonical_json(dict(design)).encode("ascii")).hexdigest()


def design_of(
    values: Mapping[str, Any], declared: Mapping[str, Parameter] | None = None
) -> dict[str, Any]:
    """The design part of ``values`` (every parameter that is neither a data input nor an
    execution setting), with a ``float``-declared parameter written as a float (so
    ``ceiling: 1`` and ``1.0`` agree)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if not is_design_parameter(name):
            continue
        want = declared[name].type if declared is not None and name in declared else None
        if want == "float" and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        out[name] = json_value(value, name)
    return out


# --------------------------------------------------------------------------------------------
# the parameters cell


def json_document(text: str | bytes, shown: str, list_field: str) -> dict[str, Any]:
    """A JSON object whose ``list_field`` is a list (strict JSON), errors prefixed ``shown``."""
    try:
        doc = parse_json(text)
    except EvalkitError as exc:
        raise EvalkitError(f"{shown}: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get(list_field), list):
        raise EvalkitError(f"{shown}: field {list_field!r} must be a list")
    return doc


def read_notebook(path: str | Path, what: str = "notebook") -> dict[str, Any]:
    """A notebook file as a dict (regular file only, bounded, strict JSON), errors naming it."""
    return json_document(read_text(path, what), f"{what} {escape_surrogates(str(path))!r}", "cells")


def parameters_cell(nb: Mapping[str, Any], path: str | Path) -> str:
    """Source of the one code cell tagged ``parameters`` (exactly one, or an error)."""
    cells = [
        c
        for c in nb.get("cells", [])
        if isinstance(c, Mapping)
        and c.get("cell_type") == "code"
        and "parameters" in ((c.get("metadata") or {}).get("tags") or [])
    ]
    if len(cells) != 1:
        raise EvalkitError(
            f"{path}: expected exactly one cell tagged 'parameters', found {len(cells)}"
        )
    src = cells[0].get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def parse_parameters(source: str, path: str | Path) -> dict[str, Parameter]:
    """The declarations of a parameters cell, in order (``name: type = literal  # help``).

    The literal must be a JSON value (checked as :func:`json_value` does) of the declared type.
    """
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise EvalkitError(f"{path}: parameters cell line {exc.lineno}: {exc.msg}") from exc
    params: dict[str, Parameter] = {}
    for node in tree.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            raise EvalkitError(
                f"{path}: parameters cell line {node.lineno}: expected 'name: type = value'"
            )
        name, tname = node.target.id, ast.unparse(node.annotation)
        if tname not in TYPES:
            raise EvalkitError(
                f"{path}: parameter {name!r} has type {tname!r}; allowed: {', '.join(TYPES)}"
            )
        try:
            default = ast.literal_eval(node.value) if node.value is not None else None
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise EvalkitError(f"{path}: parameter {name!r}: default is not a literal") from None
        default = json_value(default, f"{path}: parameter {name}")
        if default is not None and not type_ok(default, tname):
            raise EvalkitError(
                f"{path}: parameter {name!r} is declared {tname} but its default is "
                f"{type(default).__name__} {default!r}"
            )
        line = lines[node.lineno - 1]
        help_text = line.split("#", 1)[1].strip() if "#" in line else ""
        params[name] = Parameter(name, tname, default, help_text)
    return params


def notebook_parameters(path: str | Path) -> dict[str, Parameter]:
    """The parameters the notebook at ``path`` declares."""
    return parse_parameters(parameters_cell(read_notebook(path), path), path)


def type_ok(value: Any, tname: str) -> bool:
    """``value`` fits the declared type ``tname`` (a bool is never an int or a float)."""
    if tname in ("int", "float") and isinstance(value, bool):
        return False
    return isinstance(value, TYPES[tname])


# --------------------------------------------------------------------------------------------
# injecting values into the notebook


def python_literal(value: Any) -> str:
    """A Python literal that evaluates to exactly the plain JSON value ``value``.

    Only exact ``None/bool/int/float/str/list/dict`` are written (``repr`` of the built-in
    type, never a subclass's); anything else is an error, never a string built from ``str()``.
    """
    if value is None or value is True or value is False:
        return repr(value)
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        if not math.isfinite(value):
            raise EvalkitError(f"{value!r} is not a JSON value")
        return float.__repr__(value)
    if kind is str:
        return str.__repr__(value)
    if kind is list:
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if kind is dict:
        items = []
        for k, v in value.items():
            if type(k) is not str:
                raise EvalkitError(f"object key {k!r} is not a string")
            items.append(f"{str.__repr__(k)}: {python_literal(v)}")
        return "{" + ", ".join(items) + "}"
    raise EvalkitError(f"a {kind.__name__} value is not a JSON value")


_INJECTED_HEADER = "# Parameters (injected by evalkit: JSON values written as Python literals)"


def injected_source(params: Mapping[str, Any]) -> str:
    """The cell that sets ``params`` in the kernel, proven to be only literal assignments.

    Each line is ``name = literal``. Before it is returned, the source is parsed back: it must
    hold exactly one assignment per parameter, to that name, of a literal whose value is the
    given one (compared in canonical JSON). Any other outcome is an error, so no value can
    become code in the kernel.
    """
    values = {name: json_value(v, name) for name, v in params.items()}
    lines = [_INJECTED_HEADER]
    for name, value in values.items():
        if not name.isidentifier() or keyword.iskeyword(name):
            raise EvalkitError(f"parameter name {name!r} is not a Python identifier")
        lines.append(f"{name} = {python_literal(value)}")
    source = "\n".join(lines) + "\n"
    tree = ast.parse(source)
    if len(tree.body) != len(values):
        raise EvalkitError("injected parameters do not read back as one assignment each")
    for node, (name, value) in zip(tree.body, values.items(), strict=True):
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
        ):
            raise EvalkitError(f"injected parameter {name!r} is not a plain assignment")
        back = ast.literal_eval(node.value)
        if canonical_json(back) != canonical_json(value) or type(back) is not type(value):
            raise EvalkitError(f"injected parameter {name!r} does not read back as its value")
    return source


# --------------------------------------------------------------------------------------------
# parameters files


def _yaml_loader() -> type:
    import yaml  # deferred: only parameter files need PyYAML (every CLI run imports this module)

    class _JsonOnlyLoader(yaml.SafeLoader):
        """SafeLoader that builds a :class:`_NotJson` marker for every tag JSON cannot hold
        (so the check can name the value's path) and refuses a key given twice."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag.endswith(":str"):
                    if key_node.value in seen:
                        raise EvalkitError(
                            f"line {key_node.start_mark.line + 1}: key {key_node.value!r} is "
                            "given twice"
                        )
                    seen.add(key_node.value)
            return super().construct_mapping(node, deep=deep)

    def not_json(loader: Any, node: Any) -> _NotJson:
        return _NotJson(node.tag, node.start_mark.line + 1)

    for tag in ("binary", "set", "timestamp", "omap", "pairs"):
        _JsonOnlyLoader.add_constructor(f"tag:yaml.org,2002:{tag}", not_json)
    _JsonOnlyLoader.add_constructor(None, not_json)  # any other tag: !!python/..., !custom
    return _JsonOnlyLoader


def load_parameters_file(path: str | Path) -> dict[str, Any]:
    """A YAML (or JSON) mapping of parameter name -> JSON value.

    Read as a regular file only (a FIFO or device is refused, never a hang), at most
    :data:`PARAMETERS_FILE_MAX_BYTES`, strict UTF-8. Every value must be a JSON value, checked
    all the way down: a ``!!binary``, ``!!set``, ``!!python/...``, a date, NaN/infinity or a
    non-string key is refused with its path, e.g. ``thresholds[2]: a YAML !!binary value
    (line 3) is not a JSON value``. Errors are ``EvalkitError`` naming the file.
    """
    from evalkit.extras import require

    require("yaml", purpose="a parameters file (-f)")
    import yaml  # deferred: as in _yaml_loader

    shown = escape_surrogates(str(path))
    text = read_text(
        path, "parameters file", max_bytes=own_cap(PARAMETERS_FILE_MAX_BYTES), line_cap=True
    )
    try:
        data = yaml.load(text, Loader=_yaml_loader())  # a SafeLoader subclass
    except EvalkitError as exc:
        raise EvalkitError(f"parameters file {shown!r}: {exc}") from None
    except yaml.YAMLError as exc:
        raise EvalkitError(f"parameters file {shown!r}: not valid YAML: {exc}") from None
    except RecursionError:
        raise EvalkitError(f"parameters file {shown!r}: nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as exc:  # e.g. an int of 5000 digits
        raise EvalkitError(f"parameters file {shown!r}: unreadable value ({exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise EvalkitError(
            f"parameters file {shown!r}: expected a mapping of parameter names to values"
        )
    try:
        checked = json_value(data)
    except EvalkitError as exc:
        raise EvalkitError(f"parameters file {shown!r}: {exc}") from None
    return dict(checked)
