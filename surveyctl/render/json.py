"""The plan as JSON for programs. The format is documented in docs/plan.md.

`format_version` changes only when a field is removed or changes meaning.
"""

from __future__ import annotations

import json

from surveyctl.reconcile.plan import Plan
from surveyctl.render.text import summary_line


def render(plan: Plan) -> str:
    data = plan.to_dict()
    data["summary"] = {**plan.counts(), "text": summary_line(plan)}
    data["spend_total"] = vars(plan.spend_totals())
    data["has_changes"] = plan.has_changes
    for resource, out in zip(plan.resources, data["resources"], strict=True):
        out["address"] = resource.address
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
