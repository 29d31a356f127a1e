"""A key the marketplace refuses (401) is said by every command as one sentence that names
the variable the key came from, so the user knows which one to fix."""

from __future__ import annotations

import pytest

# Well shaped, so the client sends it, and unknown to the sandbox, so the service refuses it.
WRONG_KEY = "sandbox-buyer-unknown-4242"
NAMED = "check $SURVEYCTL_LOCAL_KEY, the api_key_env of environment 'local'"


@pytest.mark.parametrize(
    "args",
    [
        ["status", "10001"],
        ["surveys", "list"],
        ["attributes"],
    ],
    ids=" ".join,
)
def test_a_refused_key_is_said_naming_its_variable(args, run_cli, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", WRONG_KEY)
    result = run_cli(*args)
    assert result.exit_code == 1
    last = result.stderr.splitlines()[-1]
    assert last.startswith("Error: the marketplace refused the API key (")
    assert "answered 401" in last
    assert last.endswith(NAMED)


def test_a_transaction_read_refusing_the_key_with_403_names_its_variable(run_cli, monkeypatch):
    # The transaction reads list 403, not 401 (spec 4.4, 5.2): the sentence says the key or
    # the survey, and names the variable the key came from.
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", WRONG_KEY)
    result = run_cli("transactions", "list", "10001")
    assert result.exit_code == 1
    last = result.stderr.splitlines()[-1]
    assert "answered 403" in last
    assert last.endswith(
        "check the survey id and $SURVEYCTL_LOCAL_KEY, the api_key_env of environment 'local'"
    )
    assert WRONG_KEY not in result.stdout + result.stderr


def test_a_refused_key_is_never_shown_in_the_sentence_that_names_its_variable(run_cli, monkeypatch):
    monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", WRONG_KEY)
    result = run_cli("surveys", "list")
    assert NAMED in result.stderr
    assert WRONG_KEY not in result.stdout + result.stderr
