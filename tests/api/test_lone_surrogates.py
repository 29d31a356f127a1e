"""A string of the service holding a lone surrogate escape (`"\\ud83d"`: valid JSON, not text)
reads as U+FFFD, so that every command can print it, and none ends in a traceback."""

from __future__ import annotations

import json

CUT_EMOJI = "Caf\ud83d"  # a title cut inside the two halves of an emoji


def test_a_survey_body_reads_a_lone_surrogate_as_the_replacement_character(api, new_survey):
    survey_id = new_survey(survey_title=CUT_EMOJI)
    assert api.get_survey(survey_id)["survey_title"] == "Caf\ufffd"


def test_a_list_page_reads_a_lone_surrogate_as_the_replacement_character(api, new_survey):
    survey_id = new_survey(survey_title=CUT_EMOJI)
    listed = {s["ps_survey_id"]: s for s in api.list_surveys(status=[11])}
    assert listed[survey_id]["survey_title"] == "Caf\ufffd"


def test_a_pair_of_surrogate_escapes_reads_as_the_character_it_makes(api, new_survey):
    survey_id = new_survey(survey_title="Caf\U0001f600")
    assert api.get_survey(survey_id)["survey_title"] == "Caf\U0001f600"


def test_surveys_list_shows_a_title_with_a_lone_surrogate(run_cli, new_survey):
    survey_id = new_survey(survey_title=CUT_EMOJI)
    result = run_cli("surveys", "list", "--status", "draft", "--format", "json")
    assert result.exit_code == 0, result.stderr
    titles = {s["ps_survey_id"]: s["survey_title"] for s in json.loads(result.stdout)}
    assert titles[survey_id] == "Caf\ufffd"
