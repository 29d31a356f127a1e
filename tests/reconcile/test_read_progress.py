"""The progress of a plan's reads: one line per managed resource read, counted against them."""

from __future__ import annotations

import re

from .conftest import group_manifest, survey_manifest

READ_LINE = re.compile(r"^read (.+) \((\d+)/(\d+)\)$", re.MULTILINE)


def test_a_plan_counts_each_managed_resource_read_once_against_all_of_them(
    manifests, run_cli, unique
):
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(survey_manifest("tracker-b"))
    manifests.write(group_manifest(f"trackers-{unique}", "tracker-a", "tracker-b"))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    lines = READ_LINE.findall(run_cli("plan", "manifests").stderr)
    assert sorted(address for address, _, _ in lines) == [
        "ExclusionGroup/trackers",
        "Survey/tracker-a",
        "Survey/tracker-b",
    ]
    assert sorted((int(done), int(total)) for _, done, total in lines) == [(1, 3), (2, 3), (3, 3)]


def test_the_identity_checks_of_a_first_apply_are_not_counted_as_reads(manifests, run_cli, unique):
    # Nothing is managed yet: the GET that looks for the group on the service before creating
    # it is not a read of the plan, and used to show as "read group ... (1/1)".
    manifests.write(survey_manifest("tracker-a"))
    manifests.write(group_manifest(f"trackers-{unique}", "tracker-a"))
    result = run_cli("apply", "manifests", "--auto-approve")
    assert result.exit_code == 0, result.stderr
    assert READ_LINE.findall(result.stderr) == []


def test_the_surveys_the_survey_list_spares_reading_end_the_count_at_its_total(
    manifests, run_cli, unique
):
    # From 8 surveys on, a plan lists the account instead of reading the surveys it shows
    # unchanged; the log's count stopped at the group's read (1/9).
    names = [f"tracker-{n}" for n in range(8)]
    for name in names:
        manifests.write(survey_manifest(name))
    manifests.write(group_manifest(f"trackers-{unique}", *names))
    assert run_cli("apply", "manifests", "--auto-approve").exit_code == 0
    lines = READ_LINE.findall(run_cli("plan", "manifests").stderr)
    assert lines[-1] == (
        "the survey list: 8 surveys unchanged since surveyctl last saw them",
        "9",
        "9",
    )
