"""The plan as JSON for programs. The format is documented in docs/plan.md.

`format_version` changes only when a field is removed or changes meaning. Besides the Plan's
own fields (its `labels` table of names included), each change and drift carries `display`:
its path, old and new value in words, as the text plan shows them. A program member carries
`member` (program, market, wave; null for other resources), and `program_groups` lists each
change made alike to several members of a program with all of its members.
"""

from __future__ import annotations

import json

from surveyctl.reconcile.plan import Plan
from surveyctl.render.describe import Describer
from surveyctl.render.programs import member_groups
from surveyctl.render.text import summary_line
from surveyctl.resources import member_of


def render(plan: Plan) -> str:
    data = plan.to_dict()
    data["summary"] = {**plan.counts(), "text": summary_line(plan)}
    data["spend_total"] = vars(plan.spend_totals())
    data["has_changes"] = plan.has_changes
    data["program_groups"] = [group.to_json() for group in member_groups(plan)[0]]
    for resource, out in zip(plan.resources, data["resources"], strict=True):
        out["address"] = resource.address
        member = member_of(resource.name)
        out["member"] = vars(member) if member else None
        describer = Describer(plan, resource)
        for key in ("changes", "drift"):
            for change, shown in zip(getattr(resource, key), out[key], strict=True):
                path, old, new = describer.change(change)
                shown["display"] = {"path": path, "old": old, "new": new}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
