"""`surveyctl status`: fieldwork at a glance, from the survey, its quotas and its transactions,
read from a sandbox served --strict (its reads send no query parameter the API does not list)."""

from __future__ import annotations

import json
import os
import re
import signal

import pytest

from surveyctl.config import load_config
from surveyctl.state import open_state

from ..processes import surveyctl
from .conftest import survey_manifest, survey_title

LIVE = 22


@pytest.fixture
def sandbox(strict_sandbox):
    """The sandbox of these tests (and of `api` and `project`): the session's strict one."""
    return strict_sandbox


def _fielded(api, completes_required: int = 200, respondents: int = 120) -> int:
    """A live survey of buyer 1 that simulated respondents have been through."""
    spec = survey_manifest("fieldwork", completes_required=completes_required)["spec"]
    survey_id = api.create_survey(spec)["ps_survey_id"]
    api.set_survey_status(survey_id, LIVE)
    api.simulate_traffic(survey_id, {"respondents": respondents, "seed": 11})
    return survey_id


def _transactions(api, survey_id: int) -> list[dict]:
    return [
        record
        for page in api.iter_pages(api.get_transactions_page, survey_id=survey_id, limit=1000)
        for record in page
    ]


def test_status_shows_completes_against_goal_incidence_spend_and_quota_bars(api, run_cli):
    survey_id = _fielded(api)
    records = _transactions(api, survey_id)
    by_status = [r["Respondent Status Code"] for r in records]
    completes = by_status.count(21)
    reached = sum(by_status.count(code) for code in (17, 18, 19, 21))
    spend = sum(r["Respondent Buyer CPI"] for r in records if r["Respondent Status Code"] == 21)
    assert completes > 0
    result = run_cli("status", str(survey_id))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"survey {survey_id} is live: {survey_title('fieldwork')}"
    assert any(line.split()[:4] == ["completes", str(completes), "/", "200"] for line in lines), (
        lines
    )
    assert f"  incidence  {100 * completes / reached:.1f}% ({completes} complete," in (
        result.stdout
    )
    assert f"  spend      ${spend:,.2f}" in lines
    for quota in api.quota_performance(survey_id):
        (line,) = [ln for ln in lines if ln.split()[:1] == [quota["buyer_quota_id"]]]
        assert f"{quota['completes_fielded']} / {quota['completes_goal']}" in line
        assert line.rstrip().endswith("%") and "[" in line and "#" in line


def test_status_json_carries_the_same_figures(api, run_cli):
    survey_id = _fielded(api)
    completes = [r["Respondent Status Code"] for r in _transactions(api, survey_id)].count(21)
    data = json.loads(run_cli("status", str(survey_id), "--format", "json").stdout)
    assert data["survey_id"] == survey_id
    assert data["status_name"] == "live"
    assert data["completes"] == completes
    assert data["goal"] == 200
    assert data["outcomes"]["complete"] == completes
    fielded = {
        q["buyer_quota_id"]: q["completes_fielded"] for q in api.quota_performance(survey_id)
    }
    assert {q["buyer_quota_id"]: q["fielded"] for q in data["quotas"]} == fielded


def test_a_survey_nobody_has_reached_shows_incidence_as_not_available(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("status", str(survey_id))
    assert result.stdout.startswith(f"survey {survey_id} is draft")
    assert "incidence  n/a" in result.stdout
    data = json.loads(run_cli("status", str(survey_id), "--format", "json").stdout)
    assert data["incidence"] is None


def test_status_without_an_id_shows_every_managed_survey(run_cli, project):
    manifests = project / "manifests"
    manifests.mkdir()
    for name in ("first", "second"):
        import yaml

        (manifests / f"{name}.yaml").write_text(yaml.safe_dump(survey_manifest(name)))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    result = run_cli("status")
    assert result.exit_code == 0, result.stderr
    headings = [line for line in result.stdout.splitlines() if line.startswith("Survey/")]
    assert [h.split(" ")[0] for h in headings] == ["Survey/first", "Survey/second"]
    assert all("is draft: Survey " in h for h in headings)


def test_status_of_a_new_project_with_nothing_managed_says_so_and_exits_0(run_cli):
    result = run_cli("status")
    assert result.exit_code == 0, result.stderr
    assert "No managed surveys in the state of environment 'local' yet" in result.stderr
    assert "`surveyctl apply` creates them" in result.stderr
    assert result.stdout == ""


def test_status_as_json_with_nothing_managed_is_an_empty_list(run_cli):
    result = run_cli("status", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_a_watch_with_nothing_managed_says_so_once_and_ends(run_cli):
    result = run_cli("status", "--watch", "1")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("No managed surveys") == 1


def test_watch_refreshes_the_view(api, run_cli):
    survey_id = _fielded(api)
    result = run_cli("status", str(survey_id), "--watch", "1", "--times", "2")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count(f"survey {survey_id} is live") == 2
    assert len([ln for ln in result.stdout.splitlines() if ln.startswith("-- ")]) == 2


def test_a_json_watch_writes_one_json_document_a_line_per_refresh(api, run_cli):
    survey_id = _fielded(api)
    result = run_cli("status", str(survey_id), "--watch", "1", "--times", "2", "--format", "json")
    assert result.exit_code == 0, result.stderr
    views = [json.loads(line) for line in result.stdout.splitlines()]
    assert [view["survey_id"] for view in views] == [survey_id, survey_id]


def test_watch_ends_by_itself_once_the_survey_is_closed(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    for status in (22, 33, 44):
        api.set_survey_status(survey_id, status)
    result = run_cli("status", str(survey_id), "--watch", "1")
    assert result.exit_code == 0
    assert result.stdout.count(f"survey {survey_id} is closed") == 1


def test_ctrl_c_ends_a_watch_with_exit_code_0(api, project):
    survey_id = _fielded(api)
    watcher = surveyctl(project, "status", str(survey_id), "--watch", "60")
    first = watcher.stdout.readline()  # the first view is out: it now sleeps
    watcher.send_signal(signal.SIGINT)
    out, err = watcher.communicate(timeout=30)
    assert first.startswith("-- ")
    assert watcher.returncode == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("stop", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["SIGTERM", "SIGHUP"]
)
def test_a_watch_stopped_by_sigterm_or_sighup_exits_as_any_command_they_stop(
    api, project, stop, code
):
    # The README's conventions: only Ctrl-C is a person ending the watch; a cancelled CI job
    # or `timeout` must not read as a watch that ended well.
    survey_id = _fielded(api)
    watcher = surveyctl(project, "status", str(survey_id), "--watch", "60")
    watcher.stdout.readline()  # the first view is out: it now sleeps
    watcher.send_signal(stop)
    _, err = watcher.communicate(timeout=30)
    assert watcher.returncode == code, err
    assert f"stopped by {stop.name}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("variable", "value"), [("CI", "true"), ("TERM", "dumb")])
def test_a_watch_on_a_terminal_of_ci_or_a_dumb_one_prints_each_view_without_redrawing(
    api, project, variable, value
):
    survey_id = _fielded(api)
    leader, follower = os.openpty()
    watcher = surveyctl(
        project, "status", str(survey_id), "--watch", "1", "--times", "2",
        env={"TERM": "xterm-256color", "CI": "", variable: value}, stdout=follower,
    )  # fmt: skip
    os.close(follower)
    _, err = watcher.communicate(timeout=60)
    shown = _read_all(leader)

    assert watcher.returncode == 0, err
    assert shown.count(f"survey {survey_id} is live") == 2
    assert len([line for line in shown.splitlines() if line.startswith("-- ")]) == 2
    assert "\x1b[1A" not in shown  # no cursor moved up to draw over the last view


def _read_all(leader: int) -> str:
    """Everything written to a pseudo-terminal whose writer is gone."""
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the other end is closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return b"".join(chunks).decode()


def test_moving_a_status_still_answers_in_one_line(api, run_cli):
    survey_id = api.create_survey(survey_manifest("x")["spec"])["ps_survey_id"]
    result = run_cli("status", str(survey_id), "live", "--yes")
    assert result.stdout == f"survey {survey_id} is live (22)\n"


def test_the_spend_of_a_price_with_more_decimals_than_cents_is_rounded_exactly(api, run_cli):
    # One complete at $2.675 spends $2.68 to the cent; the float 2.675 is 2.67499... ($2.67).
    spec = survey_manifest("fieldwork", offer_price=2.675)["spec"]
    survey_id = api.create_survey(spec)["ps_survey_id"]
    api.set_survey_status(survey_id, LIVE)
    api.simulate_traffic(survey_id, {"respondents": 20, "seed": 11, "hold": True})
    held, _ = api.get_transactions_page(survey_id, status=[16])
    api.set_transaction_status(survey_id, held[0]["Transaction ID"], 21)
    result = run_cli("status", str(survey_id))
    assert result.exit_code == 0, result.stderr
    assert "  spend      $2.68" in result.stdout.splitlines()


def test_a_watch_that_ends_with_a_survey_it_cannot_read_exits_1(api, run_cli, project):
    import yaml

    manifests = project / "manifests"
    manifests.mkdir()
    for name in ("first", "second"):
        (manifests / f"{name}.yaml").write_text(yaml.safe_dump(survey_manifest(name)))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    # The sandbox is the session's: the survey deleted is this project's, found in its state.
    config = load_config(project / "surveyctl.yaml")
    store = open_state(config, config.environment("local"))
    gone = store.load().resources["Survey/first"].ps_survey_id
    store.close()
    api.delete_survey(gone)
    result = run_cli("status", "--watch", "1", "--times", "1")
    assert result.exit_code == 1
    assert f"(survey {gone}): cannot be read: GET " in result.stdout
    assert "is draft: Survey second" in result.stdout


class _Absurd:
    """A service whose fieldwork figures are numbers no survey has: a goal and counts of
    "Infinity", a price and a cost per interview of 1e308 dollars."""

    def get_survey_status(self, survey_id):
        return {
            "survey_title": "absurd",
            "ps_survey_status": LIVE,
            "completes_required": "Infinity",
            "offer_price": 1e308,
        }

    def quota_performance(self, survey_id):
        return [{"buyer_quota_id": "q", "completes_goal": float("inf"), "completes_fielded": 1}]

    def get_transactions_page(self, **query):
        return [{"Respondent Status Code": 21, "Respondent Buyer CPI": 1e308}] * 2, 1

    def iter_pages(self, fetch_page, **query):
        yield fetch_page(**query)[0]


def test_fieldwork_figures_no_survey_has_are_shown_not_a_traceback():
    from surveyctl.ops.fieldwork import fieldwork

    view = fieldwork(_Absurd(), 10001)
    assert (view.goal, view.completes, view.quotas[0].goal) == (0, 2, 0)
    assert view.spend == float("inf")  # more digits than a cent can be told of


class _PriceAsText(_Absurd):
    """A service that writes the price as text: a number, or a word that names none."""

    def __init__(self, price):
        self.price = price

    def get_survey_status(self, survey_id):
        return {**super().get_survey_status(survey_id), "offer_price": self.price}


def test_a_price_written_as_text_is_read_as_its_number():
    from surveyctl.ops.fieldwork import fieldwork

    assert fieldwork(_PriceAsText("1.30"), 10001).offer_price == 1.3


@pytest.mark.parametrize("price", ["nan", "Infinity", "n/a", 10**400])
def test_a_price_that_names_no_finite_number_is_shown_as_not_set(price):
    from surveyctl.ops.fieldwork import fieldwork

    assert fieldwork(_PriceAsText(price), 10001).offer_price is None


class _UnpricedCompletes(_PriceAsText):
    """Completes whose records carry no cost per interview, of a survey priced `price`."""

    def get_transactions_page(self, **query):
        return [{"Respondent Status Code": 21}] * 2, 1


@pytest.mark.parametrize("price", ["nan", "Infinity"])
def test_completes_of_a_survey_whose_price_names_no_number_spend_nothing_not_nan(price):
    from surveyctl.money import usd
    from surveyctl.ops.fieldwork import fieldwork

    view = fieldwork(_UnpricedCompletes(price), 10001)
    assert view.completes == 2
    assert usd(view.spend) == "$0.00"


def test_status_of_one_survey_does_not_need_a_readable_state(api, run_cli, project):
    # The manifest name is a courtesy: a damaged state must not keep anyone from the figures.
    survey_id = _fielded(api)
    state = project / ".surveyctl" / "state" / "local.json"
    state.parent.mkdir(parents=True)
    state.write_text("{ not json")
    result = run_cli("status", str(survey_id))
    assert result.exit_code == 0, result.stderr
    assert f"survey {survey_id} is live" in result.stdout


def _managed_surveys(project, run_cli, count: int) -> None:
    import yaml

    manifests = project / "manifests"
    manifests.mkdir()
    for index in range(count):
        name = f"s{index}"
        (manifests / f"{name}.yaml").write_text(yaml.safe_dump(survey_manifest(name)))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0


def test_status_of_many_surveys_reads_their_status_from_the_survey_list_not_one_call_each(
    run_cli, project
):
    from surveyctl.ops.fieldwork import LISTED_FROM

    _managed_surveys(project, run_cli, LISTED_FROM + 2)

    result = run_cli("--debug", "status")

    assert result.exit_code == 0, result.stderr
    headings = [line for line in result.stdout.splitlines() if line.startswith("Survey/")]
    assert len(headings) == LISTED_FROM + 2
    assert all("is draft: Survey s" in heading for heading in headings)
    sent = re.findall(r"surveyctl\.http > GET \S+/buyers/v2(/surveys\S*)", result.stderr)
    assert [path for path in sent if path.endswith("/status")] == []
