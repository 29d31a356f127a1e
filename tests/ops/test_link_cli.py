"""`surveyctl link build|verify` from the command line, with the secret in a variable."""

from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner

from surveyctl.cli.main import cli

RETURN_URL = "https://market.example.com/return"


@pytest.fixture
def secret(monkeypatch):
    monkeypatch.setenv("MY_SECRET", "s3cret")
    return "MY_SECRET"


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_build_prints_the_link_with_the_known_hash(secret):
    result = _run(
        "link", "build", "--status", "complete", "--transaction-id", "TX-1001",
        "--quota-id", "male,age-18-34", "--url", RETURN_URL, "--secret-env", secret,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        "https://market.example.com/return?st=21&transaction_id=TX-1001"
        "&quota_id=male,age-18-34&ps_hash=305bc34e9444bf2199410f067182d0430901b141"
    )


def test_build_then_verify_round_trips(secret):
    built = _run(
        "link", "build", "--status", "overquota", "--transaction-id", "T7",
        "--url", RETURN_URL, "--secret-env", secret,
    ).stdout.strip()  # fmt: skip
    result = _run("link", "verify", built, "--secret-env", secret)
    assert result.exit_code == 0
    assert "ps_hash matches: st 17 (overquota), transaction T7" in result.stdout


def test_verify_exits_1_with_the_reason_when_the_hash_is_wrong(secret, monkeypatch):
    built = _run(
        "link", "build", "--status", "term", "--transaction-id", "T7",
        "--url", RETURN_URL, "--secret-env", secret,
    ).stdout.strip()  # fmt: skip
    monkeypatch.setenv("MY_SECRET", "another")
    result = _run("link", "verify", built, "--secret-env", secret)
    assert result.exit_code == 1
    assert "ps_hash does not match" in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_secret_variable_is_named_and_the_secret_never_printed(monkeypatch):
    monkeypatch.delenv("NOT_SET_SECRET", raising=False)
    result = _run(
        "link", "build", "--status", "complete", "--transaction-id", "T1",
        "--url", RETURN_URL, "--secret-env", "NOT_SET_SECRET",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "$NOT_SET_SECRET, which is not set" in result.stderr


def _build(transaction_id: str, secret_env: str):
    """`link build` of a complete for `transaction_id`, its secret read from `secret_env`."""
    return _run(
        "link", "build", "--status", "complete", "--transaction-id", transaction_id,
        "--url", RETURN_URL, "--secret-env", secret_env,
    )  # fmt: skip


def test_an_empty_secret_variable_is_said_to_be_empty_not_unset(monkeypatch):
    monkeypatch.setenv("EMPTY_SECRET", "")
    result = _build("T1", "EMPTY_SECRET")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: the buyer's shared secret is read from $EMPTY_SECRET, which is empty\n"
    )


@pytest.mark.parametrize("pasted", ["pZ7+q/Xr9w==", "s3cret value", ""])
def test_a_secret_env_that_is_no_variable_name_is_refused_without_repeating_it(pasted):
    result = _build("T1", pasted)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: --secret-env must name the environment variable that holds the secret (letters, "
        "digits and underscores, such as SURVEYCTL_RETURN_SECRET), never the secret itself\n"
    )


def test_an_unset_secret_env_that_may_be_the_secret_itself_is_not_repeated(monkeypatch):
    monkeypatch.delenv("Xk92mPq7LzA", raising=False)
    result = _build("T1", "Xk92mPq7LzA")
    assert result.exit_code == 1
    assert "Xk92mPq7LzA" not in result.output
    assert "the variable --secret-env names (not shown: it may be the secret)" in result.stderr


@pytest.mark.parametrize("value", ["s3cret\n", " s3cret", "s3cret\r\n", "s3cret\t"])
@pytest.mark.parametrize("command", ["build", "verify"])
def test_a_secret_with_whitespace_at_an_end_is_refused_not_hashed(monkeypatch, value, command):
    monkeypatch.setenv("PASTED_SECRET", value)
    if command == "build":
        result = _build("T1", "PASTED_SECRET")
    else:
        result = _run(
            "link", "verify", RETURN_URL + "?st=21&ps_hash=0", "--secret-env", "PASTED_SECRET"
        )
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: the buyer's shared secret in $PASTED_SECRET starts or ends with whitespace (a "
        "line break, say), which would make every ps_hash wrong; set it without\n"
    )
    assert result.stdout == ""


def test_a_secret_with_inner_spaces_is_hashed_as_it_is(monkeypatch):
    monkeypatch.setenv("SPACED_SECRET", "two words")
    built = _build("T1", "SPACED_SECRET")
    assert built.exit_code == 0
    unsigned, _, given = built.stdout.strip().rpartition("&ps_hash=")
    assert given == hashlib.sha1((unsigned + "two words").encode()).hexdigest()


def test_an_empty_transaction_id_is_refused_in_a_whole_sentence(secret):
    result = _build("", secret)
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: the transaction id is empty: the link must name the respondent's transaction\n"
    )


def test_build_output_does_not_contain_the_secret(secret):
    result = _run(
        "link", "build", "--status", "complete", "--transaction-id", "T1",
        "--url", RETURN_URL, "--secret-env", secret,
    )  # fmt: skip
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{RETURN_URL}?st=21&transaction_id=T1&ps_hash=")
    assert "s3cret" not in result.output


def test_build_takes_the_status_by_code_as_set_status_does(secret):
    by_name = _run(
        "link", "build", "--status", "complete", "--transaction-id", "T1",
        "--url", RETURN_URL, "--secret-env", secret,
    )  # fmt: skip
    by_code = _run(
        "link", "build", "--status", "21", "--transaction-id", "T1",
        "--url", RETURN_URL, "--secret-env", secret,
    )  # fmt: skip
    assert by_code.exit_code == 0, by_code.output
    assert by_code.stdout == by_name.stdout


def test_build_refuses_an_empty_quota_id_in_the_list_instead_of_dropping_it(secret):
    result = _run(
        "link", "build", "--status", "complete", "--transaction-id", "T1",
        "--quota-id", "male,,age-18-34", "--url", RETURN_URL, "--secret-env", secret,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "'male,,age-18-34' has an empty buyer_quota_id" in result.stderr
    assert result.stdout == ""


def test_build_refuses_a_return_url_with_an_unbalanced_bracket_in_one_sentence(secret):
    result = _run(
        "link", "build", "--status", "complete", "--transaction-id", "T1",
        "--url", "https://[::1", "--secret-env", secret,
    )  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr == "Error: 'https://[::1' is not an http(s) URL\n"


@pytest.mark.parametrize("url", ["https://[::1/?ps_hash=aa", "https://a]b/"])
def test_verify_refuses_a_link_with_an_unbalanced_bracket_in_one_sentence(secret, url):
    result = _run("link", "verify", url, "--secret-env", secret)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {url!r} is not an http(s) URL\n"


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("--transaction-id", "T\udcff", "the transaction id"),
        ("--quota-id", "male\udcff", "the quota id"),
        ("--url", RETURN_URL + "\udcff", "the return URL"),
    ],
)
def test_build_of_bytes_that_are_not_utf8_names_the_value_in_one_sentence(
    secret, option, value, named
):
    # What a shell's $'T\xff' reaches Python as: an escape no URL or hash can be made of.
    args = {"--transaction-id": "T1", "--url": RETURN_URL, option: value}
    result = _run("link", "build", "--status", "21", "--secret-env", secret,
                  *[part for pair in args.items() for part in pair])  # fmt: skip
    assert result.exit_code == 1
    assert f"Error: {named} holds bytes that are not UTF-8 text" in result.stderr
    assert "Traceback" not in result.stderr


def test_verify_of_a_link_whose_bytes_are_not_utf8_is_one_sentence(secret):
    link = RETURN_URL + "?st=21&transaction_id=T\udcff&ps_hash=" + "0" * 40
    result = _run("link", "verify", link, "--secret-env", secret)
    assert result.exit_code == 1
    assert "Error: the link holds bytes that are not UTF-8 text" in result.stderr
