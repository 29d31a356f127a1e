"""JSON for programs: the plan, an apply's report, and the one writer every command's JSON
output goes through (`surveyctl.jsontext.dumps`). The formats are documented in docs/plan.md.

`format_version` changes only when a field is removed or changes meaning. Besides the Plan's
own fields (its `labels` and `survey_names` tables of names included), each change and drift
carries `display`: its path, old and new value in words, as the text plan shows them. A
program member carries `member` (program, market, wave; null for other resources), and
`program_groups` lists each change made alike to several members of a program with all of its
members. An apply's report
holds that plan, the verdict, the counts and one row per planned write (status and remote id).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from surveyctl.jsontext import dumps
from surveyctl.reconcile.plan import FORMAT_VERSION, Plan
from surveyctl.render.describe import Describer
from surveyctl.render.formats import Format, register
from surveyctl.render.programs import alike_groups, member_groups
from surveyctl.render.report import ApplyReport
from surveyctl.render.text import summary_line
from surveyctl.resources import member_of

if TYPE_CHECKING:  # --help loads the formats, and must not load the manifests package
    from surveyctl.manifests.diagnostics import Diagnostic

REPORT_VERSION = 1  # of the apply report; changes only when a field is removed or changes meaning


def render(plan: Plan, color: bool = False) -> str:
    """The plan (`color` is for the text format's sake: JSON has none)."""
    return dumps(plan_data(plan), sort_keys=True) + "\n"


def render_failure(environment: str, message: str, findings: list[Diagnostic]) -> str:
    """A plan that could not be made, as one document: a CI job that parses stdout learns what
    failed instead of meeting an empty stream (the error is on stderr as well)."""
    data = {
        "format_version": FORMAT_VERSION,  # the plan document's: one version for both
        "environment": environment,
        "failed": True,
        "error": message,
        "diagnostics": [finding.to_json() for finding in findings],
    }
    return dumps(data, sort_keys=True) + "\n"


def render_apply(report: ApplyReport, color: bool = False) -> str:
    """What an apply did, for CI: the verdict, the counts, each write with its status and id,
    and the plan it carried out."""
    data = {
        "report_version": REPORT_VERSION,
        "environment": report.plan.environment,
        "outcome": report.verdict,
        "summary": report.counts(),
        "resources": report.rows(),
        # What halted the writes (a lost lock, a failed state write), in its own sentence: a
        # lock lost before any write leaves no failed row to carry it.
        "halted": report.result.halt_detail or None,
        "refreshed": report.refreshed,
        "plan": plan_data(report.plan),
    }
    return dumps(data, sort_keys=True) + "\n"


def plan_data(plan: Plan) -> dict[str, Any]:
    """The plan's JSON document as data."""
    data = plan.to_dict()
    data["failed"] = False  # the document of a plan that could not be made says true
    data["summary"] = {**plan.counts(), "text": summary_line(plan)}
    data["spend_total"] = vars(plan.spend_totals())
    data["has_changes"] = plan.has_changes
    data["program_groups"] = alike_groups(plan)
    data["program_view"] = [group.to_json() for group in member_groups(plan)[0]]
    for resource, out in zip(plan.resources, data["resources"], strict=True):
        out["address"] = resource.address
        member = member_of(resource.name)
        out["member"] = vars(member) if member else None
        describer = Describer(plan, resource)
        for key in ("changes", "drift"):
            for change, shown in zip(getattr(resource, key), out[key], strict=True):
                path, old, new = describer.change(change)
                shown["display"] = {"path": path, "old": old, "new": new}
    return data


register(Format("json", render, apply=render_apply, failure=render_failure, report_holds_plan=True))
