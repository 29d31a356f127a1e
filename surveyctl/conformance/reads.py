"""Checks of what surveyctl assumes the service answers to reads: the catalogue, the survey
list, one survey, quotas, status and performance, the draft's transactions and a group that
does not exist (docs/api-assumptions.md)."""

from __future__ import annotations

from surveyctl.api import paths
from surveyctl.api.surveys import SURVEYS_PAGE_SIZE
from surveyctl.conformance.probe import (
    Outcome,
    Probe,
    differs,
    expect,
    holds,
    not_checked,
    read_numbers,
    same_reading,
)
from surveyctl.ops.fieldwork import COUNTED
from surveyctl.ops.transactions import DEFAULT_PAGE_SIZE
from surveyctl.reconcile.kinds.survey_listing import version

# Fields a GET may carry that the create answer does not (documented GET bodies).
READ_ONLY_EXTRAS = frozenset({"mod_on", "crtd_on", "mcqb"})
QUOTA_PERFORMANCE_FIELDS = ("ps_quota_id", "buyer_quota_id", "completes_goal", "completes_fielded")
# What surveyctl reads from the list's items (targeting=0) to know a survey without a GET: the
# identity rule (title and locale, or external_project_id) before a create and for `state
# rebuild`, the creation time for a create whose answer was lost, the status it filters again.
IDENTITY_FIELDS = (
    "survey_title",
    "survey_localization",
    "external_project_id",
    "ps_survey_status",
    "project_creation_date",
)
IDENTITY_PROJECT = "surveyctl-conformance-identity"
GENDER = 211  # answers 111 male, 112 female (public facts)
ADVANCED_CLASSES = (2, 3)  # extended and custom attributes (public facts)
# A group reference no account is expected to hold (404, not another buyer's 403).
UNKNOWN_GROUP_REF = "surveyctl-conformance-no-such-group"


def catalogue_pages(probe: Probe) -> Outcome:
    answer = probe.call("GET", paths.attributes(), params={"localization": probe.locale})
    if not answer.ok or not isinstance(answer.body, list):
        return differs(answer.describe())
    pages = answer.headers.get("total_pages")
    return expect(
        pages is not None and pages.isdigit(),
        f"{len(answer.body)} attributes on page 1, total_pages {pages!r}",
    )


def catalogue_gender(probe: Probe) -> Outcome:
    """Gender's answers, from the first page of the catalogue that holds 211: a question may
    be on any page (spec 4.6), so 211 is missing only when no page holds it. Pages are read as
    `catalog.Catalog` reads them (the client's paged reader: up to total_pages, ending at an
    empty page), which keeps the first occurrence too."""
    gender, pages = _first_on_any_page(probe, GENDER)
    if gender is None:
        return differs(f"no attribute {GENDER} on any of the {pages} page(s) of the catalogue")
    codes = {
        str(item.get("condition_code"))
        for localization in gender.get("localizations") or []
        for item in localization.get("answers") or []
    }
    return expect({"111", "112"} <= codes, f"{GENDER} answers {sorted(codes)} (page {pages})")


def _first_on_any_page(probe: Probe, code: int) -> tuple[dict | None, int]:
    """The first attribute `code` of the catalogue and the page it is on; (None, the number of
    pages read) when no page holds it."""
    client = probe.client
    read = 0
    for read, items in enumerate(
        client.iter_pages(client.get_attributes_page, localization=probe.locale), start=1
    ):
        found = next(
            (a for a in items if isinstance(a, dict) and a.get("qualification_code") == code),
            None,
        )
        if found is not None:
            return found, read
    return None, read


def catalogue_every_class(probe: Probe) -> Outcome:
    """The catalogue read without `class` holds the attributes of every class (public facts),
    as surveyctl reads it (`catalog`: no class filter, so that advanced attributes resolve by
    name too): the first attribute of page 1 of `class=2,3` is looked for on every page of the
    catalogue read without `class`."""
    params = {"localization": probe.locale, "class": ",".join(map(str, ADVANCED_CLASSES))}
    answer = probe.call("GET", paths.attributes(), params=params)
    if not (answer.ok and isinstance(answer.body, list)):
        return differs(answer.describe())
    advanced = next(
        (a for a in answer.body if isinstance(a, dict) and "qualification_code" in a), None
    )
    if advanced is None:
        return not_checked(
            f"the {probe.locale} catalogue has no attribute of class 2 or 3 to look for"
        )
    code = read_numbers(advanced["qualification_code"])
    found, pages = _first_on_any_page(probe, code)
    if found is None:
        return differs(
            f"attribute {code} (class {advanced.get('class')!r}) is on no page of the "
            f"{pages} read without class"
        )
    return holds(f"attribute {code} (class {found.get('class')!r}) on page {pages} without class")


def catalogue_en_au(probe: Probe) -> Outcome:
    answer = probe.call("GET", paths.attributes(), params={"localization": "en_AU"})
    return expect(
        answer.ok and isinstance(answer.body, list) and bool(answer.body), answer.describe()
    )


def get_like_create(probe: Probe) -> Outcome:
    live = probe.survey()
    created = probe.created or {}
    missing = sorted(set(created) - set(live))
    changed = sorted(
        key
        for key in set(created) & set(live)
        if key not in READ_ONLY_EXTRAS and not same_reading(created[key], live[key])
    )
    if missing or changed:
        return differs(f"missing {missing}, different {changed}")
    return holds(f"{len(created)} fields, the same values")


def epoch_ms(body: dict, name: str) -> int | None:
    """`body[name]` as epoch milliseconds, read as a plan reads `mod_on` (`survey_listing.
    version`: an integer, or one written as text); None when it has none."""
    return version({"mod_on": body.get(name)})


def get_carries_mod_on(probe: Probe) -> Outcome:
    live = probe.survey()
    present = [name for name in ("mod_on", "crtd_on") if epoch_ms(live, name) is not None]
    return expect(len(present) == 2, f"epoch-millisecond fields present: {present or 'none'}")


def _list_page(probe: Probe, status: int) -> tuple[list, dict, str]:
    params = {"status": status, "page": 1, "limit": 100}
    answer = probe.call("GET", paths.surveys(), params=params)
    items = answer.body if answer.ok and isinstance(answer.body, list) else []
    return items, answer.headers, answer.describe()


def list_by_status(probe: Probe) -> Outcome:
    """The draft in the list of drafts (every page: an account may hold many) and not in the
    list of live surveys."""
    drafts = probe.client.list_surveys(11, targeting=False)
    live = probe.client.list_surveys(22, targeting=False)
    in_drafts = any(item.get("ps_survey_id") == probe.draft_id for item in drafts)
    in_live = any(item.get("ps_survey_id") == probe.draft_id for item in live)
    return expect(
        in_drafts and not in_live,
        f"the draft in status=11 ({len(drafts)} surveys): {in_drafts}, "
        f"in status=22 ({len(live)}): {in_live}",
    )


def list_total_pages(probe: Probe) -> Outcome:
    _, headers, seen = _list_page(probe, 11)
    pages = headers.get("total_pages")
    return expect(pages is not None, f"{seen}; total_pages {pages!r}")


def list_carries_mod_on(probe: Probe) -> Outcome:
    """Whether a plan can skip the GET of unchanged surveys (the list's `mod_on`, read as the
    plan reads it: written as text, it is the same number)."""
    drafts, _, seen = _list_page(probe, 11)
    if not drafts:
        return differs(f"{seen}; no item to look at")
    carrying = sum(1 for item in drafts if version(item) is not None)
    return expect(carrying == len(drafts), f"{carrying} of {len(drafts)} items carry mod_on")


def list_carries_identity(probe: Probe) -> Outcome:
    """The draft's list item carries every IDENTITY_FIELDS value as GET shows it; the draft
    is given an external_project_id for it, which the next full PUT clears."""
    body = probe.put_body(external_project_id=IDENTITY_PROJECT)
    answer = probe.call("PUT", paths.survey(probe.draft_id), body=body)
    if not answer.ok:
        return differs(answer.describe())
    live = probe.survey()
    item = next(
        (
            item
            for item in probe.client.list_surveys(11, targeting=False)
            if item.get("ps_survey_id") == probe.draft_id
        ),
        None,
    )
    if item is None:
        return differs("the draft is not in the list of drafts")
    wrong = [
        f
        for f in IDENTITY_FIELDS
        if item.get(f) is None or not same_reading(item.get(f), live.get(f))
    ]
    if wrong:
        shown = ", ".join(f"{f} {item.get(f)!r} (GET: {live.get(f)!r})" for f in wrong)
        return differs(f"the list item shows {shown}")
    return holds(f"the list item shows {', '.join(IDENTITY_FIELDS)} as GET does")


def quota_performance(probe: Probe) -> Outcome:
    answer = probe.call("GET", paths.quota_performance(probe.draft_id))
    rows = answer.body if answer.ok and isinstance(answer.body, list) else None
    if not rows:
        return differs(answer.describe())
    missing = sorted({f for row in rows for f in QUOTA_PERFORMANCE_FIELDS if f not in row})
    return expect(not missing, f"{len(rows)} rows" + (f", missing {missing}" if missing else ""))


def quota_list(probe: Probe) -> Outcome:
    """The draft's quotas, asked for as `list_quotas` asks (`page` and `limit` 100)."""
    params = {"page": 1, "limit": SURVEYS_PAGE_SIZE}
    answer = probe.call("GET", paths.quotas(probe.draft_id), params=params)
    body = answer.body
    quotas = body.get("quotas") if isinstance(body, dict) else body
    ids = {q.get("buyer_quota_id") for q in quotas or [] if isinstance(q, dict)}
    wanted = {q["buyer_quota_id"] for q in (probe.create_body or {}).get("quotas", [])}
    return expect(answer.ok and wanted <= ids, f"{answer.describe()}; quotas {sorted(ids)}")


def one_quota(probe: Probe) -> Outcome:
    quota_id = (probe.create_body or {})["quotas"][0]["buyer_quota_id"]
    answer = probe.call("GET", paths.quota(probe.draft_id, quota_id))
    body = answer.body if isinstance(answer.body, dict) else {}
    return expect(answer.ok and body.get("buyer_quota_id") == quota_id, answer.describe())


def survey_status(probe: Probe) -> Outcome:
    answer = probe.call("GET", paths.survey_status(probe.draft_id))
    body = answer.body if isinstance(answer.body, dict) else {}
    return expect(answer.ok and read_numbers(body.get("ps_survey_status")) == 11, answer.describe())


def survey_performance(probe: Probe) -> Outcome:
    answer = probe.call("GET", paths.survey_performance(probe.draft_id))
    body = answer.body if isinstance(answer.body, dict) else {}
    shown = read_numbers(body.get("ps_survey_id"))
    return expect(answer.ok and shown == probe.draft_id, answer.describe())


def transactions_page(probe: Probe) -> Outcome:
    """The draft's transactions read as surveyctl reads them (`status`, `transactions export`):
    the counted statuses as one comma list, pages of 500. Spec 8 shows neither the default nor
    the maximum of `limit`; a service that refused 500 would fail every such read. The draft
    has no respondents: the list is empty, and the read costs nothing."""
    params = {
        "status": ",".join(str(status) for status in COUNTED),
        "page": 1,
        "limit": DEFAULT_PAGE_SIZE,
    }
    answer = probe.call("GET", paths.transactions(probe.draft_id), params=params)
    if not (answer.ok and isinstance(answer.body, list)):
        return differs(answer.describe())
    pages = answer.headers.get("total_pages")
    return holds(
        f"{answer.describe()} with limit={DEFAULT_PAGE_SIZE}: {len(answer.body)} "
        f"transactions, total_pages {pages!r}"
    )


def unknown_group(probe: Probe) -> Outcome:
    """A group reference no group has answers 404: before a group's create surveyctl reads its
    reference (a twin made outside the state, or another buyer's: 403), and after a create
    whose answer was lost it reads it again, taking a 404 for "the create made nothing"
    (docs/api-assumptions.md). Spec 4.9 shows no status code of this call."""
    answer = probe.call("GET", paths.survey_group(UNKNOWN_GROUP_REF))
    return expect(answer.status == 404, answer.describe())
