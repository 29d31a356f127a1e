"""The plan as JSON for programs. The format is documented in docs/plan.md.

`format_version` changes only when a field is removed or changes meaning. Besides the Plan's
own fields (its `labels` table of names included), each change and drift carries `display`:
its path, old and new value in words, as the text plan shows them.
"""

from __future__ import annotations

import json

from surveyctl.reconcile.plan import Plan
from surveyctl.render.describe import Describer
from surveyctl.render.text import summary_line


def render(plan: Plan) -> str:
    data = plan.to_dict()
    data["summary"] = {**plan.counts(), "text": summary_line(plan)}
    data["spend_total"] = vars(plan.spend_totals())
    data["has_changes"] = plan.has_changes
    for resource, out in zip(plan.resources, data["resources"], strict=True):
        out["address"] = resource.address
        describer = Describer(plan, resource)
        for key in ("changes", "drift"):
            for change, shown in zip(getattr(resource, key), out[key], strict=True):
                path, old, new = describer.change(change)
                shown["display"] = {"path": path, "old": old, "new": new}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
