"""Judge specs, base URLs, keys, and the redactor that keeps keys out of every output."""

from __future__ import annotations

import pytest

from evalkit.errors import EvalkitError
from evalkit.judge.redact import REDACTED, Redactor
from evalkit.judge.specs import (
    PLACEHOLDER_KEY,
    JudgeParams,
    loggable_base_url,
    normalize_base_url,
    parse_spec,
    resolve_key,
)


def test_a_spec_names_provider_and_model_and_keeps_colons_in_the_model() -> None:
    spec = parse_spec("openai:llama3.1:8b-instruct")
    assert (spec.provider, spec.model, spec.name) == (
        "openai",
        "llama3.1:8b-instruct",
        "openai:llama3.1:8b-instruct",
    )
    assert spec.params == JudgeParams()


def test_per_judge_parameters_override_the_defaults() -> None:
    defaults = JudgeParams(temperature=0.0, max_tokens=512, max_retries=5)
    spec = parse_spec(
        "anthropic:claude,base_url=http://127.0.0.1:9/v1,temperature=0.3,timeout=2.5", defaults
    )
    assert spec.params == JudgeParams(
        base_url="http://127.0.0.1:9/v1",
        temperature=0.3,
        max_tokens=512,
        timeout=2.5,
        max_retries=5,
    )
    assert parse_spec("openai:m,temperature=none,seed=4").params.temperature is None
    assert parse_spec("openai:m,seed=4").params.seed == 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("openai", "expected openai:MODEL"),
        ("vertex:m", "expected openai:MODEL"),
        ("anthropic: ", "the model name is empty"),
        ("openai:m,temperature=warm", "temperature: 'warm' is not a number"),
        ("openai:m,temperature=-1", "temperature must be >= 0"),
        ("openai:m,max_tokens=0", "max_tokens must be >= 1"),
        ("openai:m,max_tokens=1.5", "max_tokens: '1.5' is not an integer"),
        ("openai:m,timeout=nan", "is not a finite number"),
        ("openai:m,max_retries=-1", "max_retries must be >= 0"),
        ("openai:m,api_key_env=$HOME", "api_key_env must name an environment variable"),
        ("openai:m,base_url=127.0.0.1:8080", "must be an http:// or https:// URL"),
        ("openai:m,nokey", "expected key=value"),
        ("anthropic:m,seed=1", "takes no seed"),
        ("replay:", "replay needs a run log path"),
    ],
)
def test_bad_specs_are_evalkit_errors_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(EvalkitError, match=message.replace("$", r"\$").replace("(", r"\(")):
        parse_spec(text)


def test_replay_specs_name_a_log_and_optionally_its_judge(tmp_path) -> None:
    assert parse_spec("replay:runs/a.jsonl").model == "runs/a.jsonl"
    spec = parse_spec("replay:runs/a.jsonl#openai:gpt-x")
    assert (spec.model, spec.replay_of) == ("runs/a.jsonl", "openai:gpt-x")
    odd = tmp_path / "log#1.jsonl"
    odd.write_text("", encoding="utf-8")
    assert parse_spec(f"replay:{odd}").model == str(odd)  # an existing path keeps its '#'


@pytest.mark.parametrize(
    ("provider", "given", "expected"),
    [
        ("openai", "http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
        ("openai", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"),
        ("openai", "http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
        ("openai", "https://host/openai/v1", "https://host/openai/v1"),
        ("openai", "http://h:1/api", "http://h:1/api"),  # another path: used as given
        ("anthropic", "http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("anthropic", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080"),
        ("anthropic", "http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080"),
        ("anthropic", "https://proxy/anthropic", "https://proxy/anthropic"),
    ],
)
def test_base_urls_of_either_convention_become_what_the_sdk_expects(
    provider: str, given: str, expected: str
) -> None:
    assert normalize_base_url(provider, given) == expected
    assert normalize_base_url(provider, None) is None


def test_a_logged_base_url_drops_credentials_query_and_fragment() -> None:
    url = "https://user:sk-secret@api.example:8443/v1?api-key=sk-secret#frag"
    assert loggable_base_url(url) == "https://api.example:8443/v1"
    assert loggable_base_url("http://[::1]:9/v1") == "http://[::1]:9/v1"
    logged = parse_spec(f"openai:m,base_url={url}").params.to_log()
    assert "sk-secret" not in repr(logged)


def test_keys_come_from_the_sdk_variables_or_the_named_one_else_a_placeholder() -> None:
    openai = parse_spec("openai:m")
    anthropic = parse_spec("anthropic:m")
    assert resolve_key(openai, {"OPENAI_API_KEY": "sk-a"}).secret == "sk-a"
    token = resolve_key(anthropic, {"ANTHROPIC_AUTH_TOKEN": "tok"})
    assert token.secret == "tok" and token.auth_token
    both = resolve_key(anthropic, {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_AUTH_TOKEN": "t"})
    assert both.secret == "k" and not both.auth_token  # the SDK's own precedence
    named = parse_spec("openai:m,api_key_env=MY_KEY")
    assert resolve_key(named, {"MY_KEY": "sk-b", "OPENAI_API_KEY": "sk-a"}).secret == "sk-b"
    none = resolve_key(openai, {})
    assert none.placeholder and none.secret == PLACEHOLDER_KEY
    assert "sk-" not in repr(resolve_key(openai, {"OPENAI_API_KEY": "sk-zzz"}))
    with pytest.raises(EvalkitError, match=r"MY_KEY \(--api-key-env\) is not set"):
        resolve_key(named, {"MY_KEY": ""})


KEY = "sk-proj-Abc123Def456Ghi789"


@pytest.mark.parametrize(
    "text",
    [
        f"Incorrect API key provided: {KEY}.",
        f"Incorrect API key provided: {KEY[:8]}****{KEY[-8:]}",  # a partial echo
        f"{{'error': 'bad key', 'key': '{KEY}'}}",
        f"https://host/v1?key={KEY}&x=1",
    ],
)
def test_the_redactor_removes_a_key_whole_or_in_part(text: str) -> None:
    scrubbed = Redactor([KEY])(text)
    assert REDACTED in scrubbed
    assert not any(KEY[i : i + 8] in scrubbed for i in range(len(KEY) - 7))


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Bearer tok-from-a-proxy",
        "{'authorization': 'Bearer abc.def.ghi'}",
        '"x-api-key": "someone-elses-key"',
        "headers={'X-Api-Key': 'zzz'}",
        "request failed (Bearer aGVsbG8gd29ybGQ=)",
    ],
)
def test_the_redactor_removes_credential_headers_it_was_not_told_about(text: str) -> None:
    scrubbed = Redactor()(text)
    for secret in ("tok-from-a-proxy", "abc.def.ghi", "someone-elses-key", "zzz", "aGVsbG8"):
        assert secret not in scrubbed
    assert REDACTED in scrubbed


def test_the_redactor_leaves_ordinary_text_and_judge_replies_alone() -> None:
    reply = (
        '```json\n[{"id": "instruction-adherence", "status": "pass", "evidence": "rule 6"}]\n```'
    )
    redact = Redactor([KEY])
    assert redact(reply) == reply
    assert (
        redact("sha256 e3b0c44298fc1c149afbf4c8996fb924")
        == "sha256 e3b0c44298fc1c149afbf4c8996fb924"
    )
    assert Redactor([""])("anything") == "anything"
    assert Redactor(["k3y"])("my k3y here") == f"my {REDACTED} here"  # short: whole only
