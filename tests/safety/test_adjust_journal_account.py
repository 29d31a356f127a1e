"""The adjustments journal belongs to the buyer account, not to the environment's name: the
same transactions are not sent twice because the account is reached under another name, and
the API key that names the account is never written down."""

from __future__ import annotations

import pytest
import yaml

from surveyctl.api import ApiClient, secrets
from surveyctl.ops.adjust_journal import AdjustmentJournal

from ..conftest import BUYER_1_KEY
from .conftest import LIVE, SURVEY_SPEC, adjustment_count, configure


def _two_names_for_one_account(project, url: str) -> None:
    """`local` and `prod`: the same host and the same key variable."""
    same = {"host": url, "api_key_env": "SURVEYCTL_LOCAL_KEY"}
    config = {"environments": {"local": same, "prod": same}, "default_environment": "local"}
    (project / "surveyctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def test_the_same_account_under_another_environment_name_sends_nothing_again(
    project, sandbox, completes, run_cli
):
    _two_names_for_one_account(project, sandbox.url)
    assert run_cli("adjust", "ids.csv", "--yes").exit_code == 0
    before = adjustment_count(sandbox)

    again = run_cli("--env", "prod", "adjust", "ids.csv", "--yes")

    assert again.exit_code == 1
    assert "3 of these 3 transaction(s) were submitted already" in again.stderr
    assert "pass --resubmit" in again.stderr
    assert adjustment_count(sandbox) == before


def test_renaming_the_environment_keeps_its_adjustments_from_being_sent_again(
    project, sandbox, completes, run_cli
):
    assert run_cli("adjust", "ids.csv", "--yes").exit_code == 0
    before = adjustment_count(sandbox)
    configure(project, sandbox.url, name="staging")

    again = run_cli("adjust", "ids.csv", "--yes")

    assert again.exit_code == 1
    assert "were submitted already" in again.stderr
    assert adjustment_count(sandbox) == before


def test_the_adjustments_listing_shows_those_sent_under_another_name(
    project, sandbox, completes, run_cli
):
    _two_names_for_one_account(project, sandbox.url)
    run_cli("adjust", "ids.csv", "--yes", "--output", "a.json")

    listing = run_cli("--env", "prod", "adjustments", "--offline")

    assert listing.exit_code == 0, listing.stderr
    assert "ids.csv" in listing.stdout
    assert "status 1" in listing.stdout


def test_a_journal_kept_under_the_environment_name_by_earlier_versions_still_protects(
    project, sandbox, completes, run_cli
):
    survey_id, ids = completes
    earlier = AdjustmentJournal(project / ".surveyctl" / "adjustments" / "local.jsonl")
    record = earlier.sending(project / "ids.csv", [(t, survey_id) for t in ids], None)
    earlier.settle(record, "answered", answer={"adjustment_id": "from-before", "status": 1})
    before = adjustment_count(sandbox)

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 1
    assert "was answered: adjustment from-before" in result.stdout
    assert "were submitted already" in result.stderr
    assert adjustment_count(sandbox) == before


def test_a_journal_kept_under_another_name_of_the_same_account_by_earlier_versions_protects(
    project, sandbox, completes, run_cli
):
    survey_id, ids = completes
    _two_names_for_one_account(project, sandbox.url)
    earlier = AdjustmentJournal(project / ".surveyctl" / "adjustments" / "local.jsonl")
    record = earlier.sending(project / "ids.csv", [(t, survey_id) for t in ids], None)
    earlier.settle(record, "answered", answer={"adjustment_id": "from-before", "status": 1})
    before = adjustment_count(sandbox)

    result = run_cli("--env", "prod", "adjust", "ids.csv", "--yes")

    assert result.exit_code == 1
    assert "was answered: adjustment from-before" in result.stdout
    assert adjustment_count(sandbox) == before


KEY_SHAPES = [
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "0123456789abcdef0123456789abcdef",  # hex, as the account's name is
    "QWxhZGRpbjpvcGVuIHNlc2FtZQ==",  # base64
    "k3y!#$%&'()*+,-./:;<=>?@[]^_`{|}~",  # every punctuation a header may carry
    "12345678",  # digits only, the shortest key accepted
]


@pytest.fixture
def market_of_key(project, start_sandbox, monkeypatch):
    """`market_of_key(key)`: a sandbox where `key` is buyer 1's, a live survey there whose
    completes are named in ids.csv, and the project's `local` environment using that key."""

    # The keys these tests register (digits only, among them) would be redacted from every
    # later test's output in this process: each is forgotten when its test ends.
    monkeypatch.setattr(secrets, "_SECRETS", set(secrets._SECRETS))

    def make(key: str) -> None:
        market = start_sandbox(keys={key: 1})
        api = ApiClient(market.url, BUYER_1_KEY, retries=0)
        try:
            survey_id = api.create_survey(SURVEY_SPEC)["ps_survey_id"]
            api.set_survey_status(survey_id, LIVE)
            api.simulate_traffic(survey_id, {"respondents": 10, "seed": 3, "bad_hash_share": 0})
            items, _ = api.get_transactions_page(survey_id, status=[21])
        finally:
            api.close()
        rows = [f"{item['Transaction ID']},{survey_id}" for item in items]
        text = "\n".join(["transaction_id,survey_id", *rows]) + "\n"
        (project / "ids.csv").write_text(text, encoding="utf-8")
        configure(project, market.url)
        monkeypatch.setenv("SURVEYCTL_LOCAL_KEY", key)

    return make


@pytest.mark.parametrize("key", KEY_SHAPES)
def test_the_api_key_is_never_written_to_the_journal(key, market_of_key, project, run_cli):
    market_of_key(key)

    result = run_cli("adjust", "ids.csv", "--yes")

    assert result.exit_code == 0, result.output
    files = [p for p in (project / ".surveyctl" / "adjustments").rglob("*") if p.is_file()]
    assert any('"event":"answered"' in path.read_text() for path in files)
    for path in files:
        assert key not in path.name
        assert key.encode() not in path.read_bytes()
