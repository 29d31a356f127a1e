"""Fieldwork at a glance: how a survey in the field is doing, computed from what the API shows.

For each survey: its status, completes against the goal (`completes_required`), the incidence
rate, the spend so far, and each quota's fill. The sources:

- the survey's status call (`GET /surveys/{id}/status`): status, title, goal, offer_price,
  without the targeting a whole survey carries; the whole survey (`GET /surveys/{id}`) when
  the status call's answer lacks one of them (the public material names the call, not its body).
  For many surveys at once, the survey list (every status, a hundred surveys a page, without
  targeting) gives the same four fields: a survey the list shows with all four needs no call of
  its own, so 1,000 surveys cost a dozen list pages instead of 1,000 status calls;
- quota performance (`GET /surveys/{id}/quotas/performance`): completes_goal and
  completes_fielded per quota;
- the survey's transactions (4.4), read page by page filtered to the statuses that count for the
  buyer (17 over quota, 18 buyer termination, 19 buyer drop, 21 complete) and only counted, so
  memory stays flat. Completes are the transactions of status 21; IR = completes / (completes +
  terminations + drops + over quota) (public facts), "n/a" before anyone reached the survey;
  spend is the sum of the completes' `Respondent Buyer CPI` (a complete without a readable
  CPI counts at the survey's offer_price).

The module returns data; the CLI draws it (bars on a terminal, text otherwise, or JSON).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from decimal import Decimal

from surveyctl.api import ApiClient
from surveyctl.api.account_surveys import account_surveys
from surveyctl.errors import SurveyctlError
from surveyctl.money import cents, dollars
from surveyctl.numbers import as_number
from surveyctl.statuses import COMPLETE, SURVEY_STATUSES, survey_status_name

OVER_QUOTA, BUYER_TERMINATION, BUYER_DROP = 17, 18, 19
# The statuses that count for the buyer (public facts): those of the IR formula.
COUNTED = (OVER_QUOTA, BUYER_TERMINATION, BUYER_DROP, COMPLETE)
PAGE_SIZE = 500
# Below this many surveys one status call each costs no more than listing every status (one
# request each, at least).
LISTED_FROM = 2 * len(SURVEY_STATUSES)
# What the view reads from the survey; the status call answers them in the sandbox.
SUMMARY_FIELDS = ("ps_survey_status", "survey_title", "completes_required", "offer_price")


@dataclass(frozen=True)
class QuotaFill:
    """One quota: its completes against its goal."""

    buyer_quota_id: str
    goal: int
    fielded: int

    @property
    def fill(self) -> float:
        """Share of the goal reached, 0..1 (a quota with goal 0 is full)."""
        return 1.0 if self.goal <= 0 else min(1.0, self.fielded / self.goal)


@dataclass
class Fieldwork:
    """How one survey is doing. `error` is set (and the rest left empty) when it cannot be read."""

    survey_id: int
    name: str | None = None  # the manifest name, when the survey is managed
    title: str = ""
    status: int | None = None
    completes: int = 0
    goal: int = 0
    incidence: float | None = None  # percent; None before anyone reached the survey
    spend: float = 0.0
    offer_price: float | None = None
    outcomes: dict[str, int] = field(default_factory=dict)  # counted statuses, by name
    quotas: list[QuotaFill] = field(default_factory=list)
    error: str | None = None

    @property
    def status_name(self) -> str:
        return survey_status_name(self.status)

    @property
    def progress(self) -> float:
        """Share of the goal reached, 0..1."""
        return 0.0 if self.goal <= 0 else min(1.0, self.completes / self.goal)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["status_name"] = self.status_name
        data["quotas"] = [{**asdict(q), "fill": round(q.fill, 4)} for q in self.quotas]
        return data


def fieldwork(
    client: ApiClient, survey_id: int, name: str | None = None, summary: dict | None = None
) -> Fieldwork:
    """The fieldwork of one survey; ApiError and friends when it cannot be read. `summary`:
    its status, title, goal and offer_price as the survey list showed them (else read)."""
    survey = summary if summary is not None else _summary(client, survey_id)
    performance = client.quota_performance(survey_id)
    view = Fieldwork(
        survey_id=survey_id,
        name=name,
        title=str(survey.get("survey_title") or ""),
        status=survey.get("ps_survey_status"),
        goal=_integer(survey.get("completes_required")),
        offer_price=_number(survey.get("offer_price")),
        quotas=[
            QuotaFill(
                str(item.get("buyer_quota_id")),
                _integer(item.get("completes_goal")),
                _integer(item.get("completes_fielded")),
            )
            for item in performance
            if isinstance(item, dict)
        ],
    )
    price = dollars(survey.get("offer_price"))
    counts, spend = _count_transactions(client, survey_id, price)
    view.completes = counts[COMPLETE]
    view.spend = cents(spend)
    reached = sum(counts[status] for status in COUNTED)
    view.incidence = round(100 * view.completes / reached, 1) if reached else None
    view.outcomes = {
        "complete": counts[COMPLETE],
        "buyer termination": counts[BUYER_TERMINATION],
        "buyer drop": counts[BUYER_DROP],
        "over quota": counts[OVER_QUOTA],
    }
    return view


def _summary(client: ApiClient, survey_id: int) -> dict:
    """Status, title, goal and offer_price: from the status call when it has them all."""
    status = client.get_survey_status(survey_id)
    if isinstance(status, dict) and all(name in status for name in SUMMARY_FIELDS):
        return status
    return client.get_survey(survey_id)


def fieldwork_of_many(
    client: ApiClient,
    surveys: Iterable[tuple[int, str | None]],
    parallelism: int,
) -> list[Fieldwork]:
    """The fieldwork of each (survey_id, name), read `parallelism` at a time; a survey that
    cannot be read gets its `error` instead of failing the others."""

    items = list(surveys)
    summaries = _listed_summaries(client) if len(items) >= LISTED_FROM else {}

    def one(item: tuple[int, str | None]) -> Fieldwork:
        survey_id, name = item
        try:
            return fieldwork(client, survey_id, name, summaries.get(survey_id))
        except SurveyctlError as exc:
            return Fieldwork(survey_id=survey_id, name=name, error=str(exc))

    with ThreadPoolExecutor(max_workers=max(1, min(parallelism, len(items) or 1))) as pool:
        return list(pool.map(one, items))


def _listed_summaries(client: ApiClient) -> dict[int, dict]:
    """ps_survey_id -> the survey's list item, for each survey the list shows with every
    field of SUMMARY_FIELDS; empty when the list cannot be read (each survey is then read on
    its own, and says so if it cannot be)."""
    try:
        items, _pages = account_surveys(client)
    except SurveyctlError:
        return {}
    return {
        item["ps_survey_id"]: item
        for item in items
        if isinstance(item.get("ps_survey_id"), int) and all(f in item for f in SUMMARY_FIELDS)
    }


def _count_transactions(
    client: ApiClient, survey_id: int, offer_price: Decimal | None
) -> tuple[Counter, Decimal]:
    counts: Counter = Counter()
    spend = Decimal(0)
    for page in client.iter_pages(
        client.get_transactions_page, survey_id=survey_id, status=list(COUNTED), limit=PAGE_SIZE
    ):
        for record in page:
            status = _integer(record.get("Respondent Status Code"))
            counts[status] += 1
            if status == COMPLETE:
                cpi = dollars(record.get("Respondent Buyer CPI"))
                spend += cpi if cpi is not None else (offer_price or Decimal(0))
    return counts, spend


def _integer(value: object) -> int:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):  # OverflowError: a count of "Infinity"
        return 0


def _number(value: object) -> float | None:
    """A number, also from the strings some records carry ("1.30"); None when absent or when
    it names no finite number ("nan", "n/a")."""
    number = as_number(value)
    if isinstance(number, bool) or not isinstance(number, int | float):
        return None
    try:
        number = float(number)
    except OverflowError:  # an integer of 400 digits in a JSON body
        return None
    return number if math.isfinite(number) else None
