"""Quota generators: dimensions of cells with shares, expanded into plain quotas.

```yaml
- generate:
    id: "{gender}-{age}"      # buyer_quota_id template over the dimension names
    total: 1000               # default: the survey's completes_required
    interlock:
      gender: {qualification_code: 211, cells: {male: {condition_codes: ["111"], share: 0.48}, ...}}
      age:    {attribute: Age, cells: {"18-34": {range_sets: [...], share: 0.3}, ...}}
```
One quota per combination of cells, in the order written; a cell's count is total x the
product of its shares, rounded by the largest-remainder method so that the counts sum
exactly to the total (ties go to the earlier cell, so the result is deterministic).
"""

from __future__ import annotations

import itertools
import math
import string
from fractions import Fraction

from surveyctl.errors import Location
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import MarkedDict, whole
from surveyctl.manifests.targeting import targeting
from surveyctl.model import Criterion, Quota

MAX_CELLS = 10_000
# Shares written as decimals (0.333 x 3) may miss 1 by a rounding; they are then normalised.
SHARE_TOLERANCE = Fraction(1, 1000)


def largest_remainder(weights: list[Fraction], total: int) -> list[int]:
    """Integer counts proportional to `weights` that sum exactly to `total`."""
    weight_sum = sum(weights, Fraction(0))
    if total == 0 or weight_sum == 0:
        return [0] * len(weights)
    exact = [total * w / weight_sum for w in weights]
    counts = [math.floor(e) for e in exact]
    left = total - sum(counts)
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i] - counts[i]), i))
    for index in order[:left]:
        counts[index] += 1
    return counts


def quota_count(entry: MarkedDict) -> int:
    """How many quotas a schema-valid `generate` entry makes, counted without making them."""
    return math.prod(len(dim["cells"]) for dim in entry["generate"]["interlock"].values())


def expand(entry: MarkedDict, default_total: int, diagnostics: Diagnostics) -> list[Quota]:
    """The quotas of one `generate` entry; problems become diagnostics and yield no quotas."""
    generator: MarkedDict = entry["generate"]
    where = entry.where("generate")
    dimensions: MarkedDict = generator["interlock"]
    before = len(diagnostics)
    sums_off: list[str] = []
    shares = {
        name: _shares(name, dim, dimensions.where(name), diagnostics, sums_off)
        for name, dim in dimensions.items()
    }
    _one_dimension_per_attribute(dimensions, diagnostics)
    id_template = generator.get("id") or "-".join("{%s}" % name for name in dimensions)
    _check_template(id_template, "id", dimensions, generator.where("id"), diagnostics, True)
    title_template = generator.get("title")
    if title_template is not None:
        _check_template(
            title_template, "title", dimensions, generator.where("title"), diagnostics, False
        )
    cell_count = math.prod(len(dim["cells"]) for dim in dimensions.values())
    if cell_count > MAX_CELLS:
        diagnostics.error(
            f"The generator makes {cell_count} quotas, more than the {MAX_CELLS} allowed", where
        )
    # Shares that miss 1 are an error but are still expanded (normalised), so that the
    # cells' targeting is checked in the same run; any other problem yields no quotas.
    if len(diagnostics) > before + len(sums_off):
        return []
    total = whole(generator.get("total", default_total))
    combinations = list(
        itertools.product(*[list(dim["cells"].items()) for dim in dimensions.values()])
    )
    names = list(dimensions)
    weights = [
        math.prod(
            (shares[names[i]][cell_name] for i, (cell_name, _) in enumerate(combo)),
            start=Fraction(1),
        )
        for combo in combinations
    ]
    counts = largest_remainder(weights, total)
    quotas = []
    for combo, count in zip(combinations, counts, strict=True):
        cells = {names[i]: cell_name for i, (cell_name, _) in enumerate(combo)}
        criteria = [
            targeting(
                Criterion,
                dimensions[names[i]],
                cell,
                dimensions[names[i]]["cells"].where(cell_name),
            )
            for i, (cell_name, cell) in enumerate(combo)
        ]
        quotas.append(
            Quota(
                buyer_quota_id=id_template.format_map(cells),
                required_count=count,
                criteria=criteria,
                quota_title=title_template.format_map(cells) if title_template else None,
                location=where,
                generated=True,
            )
        )
    return quotas


def _one_dimension_per_attribute(dimensions: MarkedDict, diagnostics: Diagnostics) -> None:
    """Two dimensions on one attribute interlock into cells no respondent can fill (male and
    female at once): an error at the second, whose counts would never be reached."""
    first: dict[object, str] = {}
    for name, dimension in dimensions.items():
        attribute = dimension.get("attribute")
        key = (
            attribute.casefold()
            if isinstance(attribute, str)
            else whole(dimension.get("qualification_code"))
        )
        if key is None:
            continue
        if key in first:
            shown = attribute if isinstance(attribute, str) else f"qualification {key}"
            diagnostics.error(
                f"Dimensions {first[key]!r} and {name!r} both target {shown}: their cells "
                "interlock into quotas no respondent can fill; make them one dimension",
                dimensions.where(name),
            )
        else:
            first[key] = name


def _shares(
    name: str,
    dimension: MarkedDict,
    where: Location,
    diagnostics: Diagnostics,
    sums_off: list[str],
) -> dict[str, Fraction]:
    """Each cell's share divided by the dimension's sum, checked to be (about) 1; a dimension
    whose sum is off is named in `sums_off`."""
    cells: MarkedDict = dimension["cells"]
    raw = {cell: Fraction(str(spec["share"])) for cell, spec in cells.items()}
    total = sum(raw.values(), Fraction(0))
    if abs(total - 1) > SHARE_TOLERANCE:
        diagnostics.error(f"The shares of dimension {name!r} sum to {float(total):g}, not 1", where)
        sums_off.append(name)
        if total == 0:
            return {cell: Fraction(0) for cell in raw}
    for cell_name, cell in cells.items():
        given = [key for key in ("condition_codes", "answers", "range_sets") if key in cell]
        if len(given) != 1:
            diagnostics.error(
                f"Cell {cell_name!r} of dimension {name!r} needs exactly one of "
                f"condition_codes, answers or range_sets",
                cells.where(cell_name),
            )
    return {cell: share / total for cell, share in raw.items()}


def _check_template(
    template: str,
    label: str,
    dimensions: MarkedDict,
    where: Location,
    diagnostics: Diagnostics,
    every_dimension: bool,
) -> None:
    try:
        fields = [
            (field, conversion, spec)
            for _, field, spec, conversion in string.Formatter().parse(template)
            if field is not None
        ]
    except ValueError as exc:
        diagnostics.error(
            f"The generator's {label} template {template!r} is malformed: {exc}", where
        )
        return
    known = ", ".join(dimensions)
    for field, conversion, spec in fields:
        if field not in dimensions:
            diagnostics.error(
                f"The generator's {label} template {template!r} uses {{{field}}}; "
                f"it may use only these dimension names: {known}",
                where,
            )
            return
        if conversion or spec:
            shown = field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            diagnostics.error(
                f"The generator's {label} template {template!r} writes {{{shown}}}; a "
                f"dimension is written plainly, as {{{field}}}, with no conversion or format",
                where,
            )
            return
    missing = [name for name in dimensions if name not in {f for f, _, _ in fields}]
    if every_dimension and missing:
        diagnostics.error(
            f"The generator's id template {template!r} must use every dimension so that ids "
            f"are unique; it lacks {', '.join(f'{{{name}}}' for name in missing)}",
            where,
        )
