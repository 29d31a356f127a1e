"""Simulated respondents: a stable profile per person, targeting checks, transaction records.

A respondent is known by a PSID drawn from a large pool; the same PSID always has the same
profile (its answers are derived from the PSID), so a person met again in another survey of an
exclusion group is recognisably the same person. Answers come from the attribute catalogue of
the survey's locale.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from surveyctl.sandbox import catalogue
from surveyctl.sandbox.targeting import answer_key

POOL_SIZE = 1_000_000
AGE, INCOME, CHILDREN, DEVICE, CHILD_AGE, CHILD_GENDER, HISPANIC, POSTAL_CODE = (
    212, 213, 218, 219, 220, 221, 222, 229,
)  # fmt: skip
# Always asked, so the record's demographic fields are filled (when the locale has them).
PROFILE_CODES = (211, 212, 213, 214, 215, 216, 217, 218, 219, 222, 225, 226, 227, 229)

STATUS_DESCRIPTIONS = {
    11: "Platform drop",
    12: "Platform quota full",
    13: "Platform termination",
    14: "In progress on the platform",
    15: "Platform quality / de-dupe",
    16: "In progress on the buyer survey",
    17: "Buyer quota full",
    18: "Buyer termination",
    19: "Buyer drop",
    20: "Buyer quality termination",
    21: "Complete",
    22: "Survey closed termination",
    23: "Survey paused termination",
    24: "Unopened quota termination",
    25: "Supplier allocation full",
    30: "Buyer security",
    31: "Tampered buyer URL",
}
# record field of the code, record field of the text, qualification code
_CHOICE_FIELDS = (
    ("Gender Code", "Gender", 211),
    ("Race Code", "Race", 214),
    ("Race/Ethnicity Code", "Race/Ethnicity", 214),
    ("HispanicOrigin Code", "HispanicOrigin", HISPANIC),
    ("Employment Code", "Employment", 215),
    ("Education Code", "Education", 216),
    ("Relationship Code", "Relationship", 217),
    ("State Code", "State", 225),
    ("Region Code", "Region", 226),
    ("Division Code", "Division", 227),
    ("Device Code", "Device", DEVICE),
)
_BROWSERS = (
    ("Chrome", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0"),
    ("Safari", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15"),
    ("Firefox", "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0"),
)


@dataclass
class Respondent:
    """One person: PSID and answers per qualification code (codes, numbers or texts)."""

    psid: str
    values: dict[int, list[Any]] = field(default_factory=dict)
    texts: dict[int, str] = field(default_factory=dict)


def draw_psid(rng: random.Random) -> str:
    return f"SBX{rng.randrange(POOL_SIZE):07d}"


def profile(psid: str, locale: str, codes: set[int], targeted: dict[int, set[str]]) -> Respondent:
    """The person `psid` in `locale`, answering `codes` (unknown codes are left unanswered).

    Free-entry answers (postal code) hit one of the survey's own values (`targeted`) six times
    in ten, so that a survey targeting a few postal codes still sees qualified people.
    """
    person = Respondent(psid)
    for code in sorted(codes | set(PROFILE_CODES)):
        attribute = catalogue.attribute(locale, code)
        if attribute is None:
            continue
        rng = random.Random(f"{psid}:{code}")
        answers = attribute["localizations"][0]["answers"]
        kind = attribute["type"]
        if kind == catalogue.TYPE_NUMERIC_RANGE:
            person.values[code] = [_number(rng, code, attribute)]
        elif kind == catalogue.TYPE_FREE_TEXT:
            wanted = sorted(targeted.get(code, ()))
            value = rng.choice(wanted) if wanted and rng.random() < 0.6 else _free(rng)
            person.values[code] = [value]
        elif answers:
            count = rng.randint(1, min(3, len(answers))) if kind == 2 else 1
            chosen = rng.sample(answers, count)
            person.values[code] = [a["condition_code"] for a in chosen]
            person.texts[code] = chosen[0]["eng_text"]
    _children(person, locale)
    return person


def _number(rng: random.Random, code: int, attribute: dict) -> int:
    if code == AGE:
        return rng.randint(18, 80)
    if code == INCOME:
        return rng.randrange(0, 250_000, 1000)
    fmt = attribute["localizations"][0]["format"]
    low = fmt.get("min") or 0
    high = fmt.get("max") if fmt.get("max") is not None else low + 100
    return rng.randint(int(low), int(high))


def _free(rng: random.Random) -> str:
    return f"{rng.randrange(100000):05d}"


def _children(person: Respondent, locale: str) -> None:
    """Child ages and genders consistent with the Children answer."""
    count = children_count(person, locale)
    rng = random.Random(f"{person.psid}:children")
    person.values[CHILD_AGE] = [rng.randint(0, 17) for _ in range(count)]
    genders = catalogue.attribute(locale, CHILD_GENDER)
    options = genders["localizations"][0]["answers"] if genders else []
    picked = [rng.choice(options) for _ in range(count)] if options else []
    person.values[CHILD_GENDER] = [a["condition_code"] for a in picked]
    person.texts[CHILD_GENDER] = ",".join(a["eng_text"] for a in picked)


def children_count(person: Respondent, locale: str) -> int:
    """0..4, the position of the Children answer in the catalogue (None, 1, 2, 3, 4+)."""
    attribute = catalogue.attribute(locale, CHILDREN)
    chosen = person.values.get(CHILDREN)
    if attribute is None or not chosen:
        return 0
    codes = [a["condition_code"] for a in attribute["localizations"][0]["answers"]]
    return codes.index(chosen[0]) if chosen[0] in codes else 0


def targeted_codes(body: dict) -> tuple[set[int], dict[int, set[str]]]:
    """The qualification codes a survey body targets, and its free-entry values per code."""
    codes: set[int] = set()
    values: dict[int, set[str]] = {}
    targets = list(body.get("qualifications") or [])
    for quota in body.get("quotas") or []:
        targets += quota.get("criteria") or []
    for target in targets:
        codes.add(target["qualification_code"])
        values.setdefault(target["qualification_code"], set()).update(
            target.get("condition_codes") or []
        )
    return codes, values


def matches(person: Respondent, target: dict) -> bool:
    """Whether the person meets one qualification or criterion (2.3)."""
    code = target["qualification_code"]
    values = person.values.get(code, [])
    codes = target.get("condition_codes")
    if codes:  # an empty list beside range_sets is as if absent (targeting.py)
        wanted = {answer_key(code, c) for c in codes}
        return any(answer_key(code, v) in wanted for v in values)
    ranges = target.get("range_sets") or []
    return any(
        r["from"] <= _in_units(v, r["units"]) <= r["to"]
        for v in values
        for r in ranges
        if _numeric(v)
    )


def _in_units(value: float, units: int) -> float:
    """A profile keeps ages in years; a range in months compares the age in months."""
    return value * 12 if units == catalogue.MONTHS else value


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def iso(moment: datetime) -> str:
    """ISO 8601 UTC with milliseconds and Z, the sample shape of spec 2.10."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def record(
    *,
    transaction_id: str,
    person: Respondent,
    survey: Any,
    supplier_id: int,
    entered: datetime,
    status: int,
    rng: random.Random,
) -> dict:
    """The transaction record (2.10) of a session that just left the platform's screener."""
    body = survey.body
    locale = body["survey_localization"]
    language, _, country = locale.partition("_")
    browser, agent = _BROWSERS[rng.randrange(len(_BROWSERS))]
    price = float(body.get("offer_price") or 0.0)
    fields: dict[str, Any] = {
        "PSID": person.psid,
        "Transaction ID": transaction_id,
        "Supplier ID": supplier_id,
        "Supplier Name": f"Sandbox supplier {supplier_id}",
        "Supplier Group": "Sandbox",
        "Sub Supplier Name": "",
        "Buyer ID": survey.buyer_id,
        "Buyer Name": f"Sandbox buyer {survey.buyer_id}",
        "Project Name": body.get("survey_title", ""),
        "Survey Country": country,
        "Survey Language": language,
        "PO / Billing": body.get("billing_id") or f"PS{survey.survey_id}",
        "Expected Buyer CPI": price,
        "Expected Buyer CPI Fx": price,
        "Respondent Status Code": status,
        "Respondent Status Description": STATUS_DESCRIPTIONS[status],
        "PS Entry DateTime": iso(entered),
        "Supplier Respondent ID": f"{supplier_id}-{person.psid}",
        "Supplier Sid": f"sid-{rng.randrange(10**8):08d}",
        "Respondent Source": "sandbox simulator",
        "Browser": browser,
        "UserAgent": agent,
        "IP": f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}",
        "Offer ID": str(survey.survey_id),
        "Age": _first_int(person, AGE),
        "Income": _first_int(person, INCOME),
        "ZipCode": str((person.values.get(POSTAL_CODE) or [""])[0]),
        "Children Count": children_count(person, locale),
    }
    for code_field, text_field, code in _CHOICE_FIELDS:
        chosen = person.values.get(code)
        if chosen:
            fields[code_field] = int(chosen[0])
            fields[text_field] = person.texts.get(code, "")
    ages = person.values.get(CHILD_AGE, [])
    genders = (person.texts.get(CHILD_GENDER) or "").split(",")
    for n, age in enumerate(ages[:5], start=1):
        fields[f"Child{n} Age"] = str(age)
        fields[f"Child{n} Gender"] = genders[n - 1] if n - 1 < len(genders) else ""
    return fields


def _first_int(person: Respondent, code: int) -> int:
    values = person.values.get(code) or [0]
    return int(values[0])
