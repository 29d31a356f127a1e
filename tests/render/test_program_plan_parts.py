"""What is the same across a program's members is shown once, and what differs with the
members it differs for: a new wave's creates, a template change beside one market's override,
the same drift on several members. Nothing a member's own entry would show is left out."""

from __future__ import annotations

import json

from surveyctl.reconcile.plan import FieldChange, ResourceChange
from surveyctl.render import json as json_format
from surveyctl.render import markdown, text
from surveyctl.render.lines import resource_lines

from .plans import plan, price, spend, update

LABELS = {
    "en_US": {"211": {"name": "Gender", "answers": {"111": "Male", "112": "Female"}}},
    "en_GB": {"211": {"name": "Gender", "answers": {"111": "Male", "112": "Female"}}},
    "de_DE": {"211": {"name": "Geschlecht", "answers": {"111": "Männlich", "112": "Weiblich"}}},
}
# What differs per market: completes and price.
MARKETS = {"en_US": (800, 2.5), "en_GB": (600, 2.8), "de_DE": (400, 3.1)}


def _body(locale: str, wave: str) -> dict:
    completes, offer = MARKETS[locale]
    return {
        "survey_title": f"Tracker {locale[3:]} {wave}",
        "survey_localization": locale,
        "survey_category_code": 231,
        "completes_required": completes,
        "expected_ir": 40,
        "offer_price": offer,
        "qualifications": [{"qualification_code": 211, "condition_codes": ["111", "112"]}],
        "quotas": [
            {
                "buyer_quota_id": "men",
                "required_count": completes // 2,
                "criteria": [{"qualification_code": 211, "condition_codes": ["111"]}],
            }
        ],
    }


def _creates(*waves: str) -> list[ResourceChange]:
    return [
        ResourceChange(
            "Survey",
            f"tracker[{locale},{wave}]",
            "create",
            body=_body(locale, wave),
            spend=spend(None, MARKETS[locale][0] * MARKETS[locale][1]),
        )
        for locale in MARKETS
        for wave in waves
    ]


def _updates(waves: tuple[str, ...], *changes: FieldChange, **by_market) -> list[ResourceChange]:
    """Every member of MARKETS x `waves` with `changes`, and each market of `by_market` with
    its own change on top."""
    return [
        update(
            f"tracker[{locale},{wave}]",
            *changes,
            *([by_market[locale]] if locale in by_market else []),
            remote_id=10001 + n,
        )
        for n, (locale, wave) in enumerate((m, w) for m in MARKETS for w in waves)
    ]


def _drifted(*names: str, action: str = "no-op") -> list[ResourceChange]:
    return [
        ResourceChange(
            "Survey",
            name,
            action,
            remote_id=10001 + n,
            drift=[FieldChange("expected_ir", 40, 30)],
        )
        for n, name in enumerate(names)
    ]


def _member_lines(made, resource: ResourceChange) -> list[str]:
    """What the member's own entry shows, but its header and spend."""
    return [
        f"{line.symbol} {line.text}"
        for line in resource_lines(made, resource, spend=False)
        if line.depth > 0
    ]


def test_the_creates_of_a_new_wave_are_one_group_named_by_its_wave_and_markets():
    shown = text.render(plan(*_creates("w3"), labels=LABELS))
    assert (
        "+ 3 surveys of program tracker will be created: wave w3 in markets en_US, en_GB, "
        "de_DE (+$4,920.00)\n"
    ) in shown
    assert "will be created\n" not in shown


def test_a_field_every_new_survey_has_is_shown_once():
    shown = text.render(plan(*_creates("w3"), labels=LABELS))
    assert shown.count("+ expected_ir: 40\n") == 1
    assert shown.count("+ survey_category_code: 231\n") == 1


def test_what_differs_by_market_is_shown_under_each_new_survey():
    shown = text.render(plan(*_creates("w3"), labels=LABELS))
    assert (
        "    + Survey/tracker[de_DE,w3] (+$1,240.00)\n"
        "        + completes_required: 400\n"
        "        + offer_price: 3.1\n"
        "        + qualifications[Geschlecht].answers: Männlich (111), Weiblich (112)\n"
        "        + quotas[men]: 200 completes; Geschlecht: Männlich (111)\n"
        '        + survey_localization: "de_DE"\n'
        '        + survey_title: "Tracker DE w3"\n'
    ) in shown


def test_the_english_markets_share_an_answer_line_the_german_market_does_not():
    shown = text.render(plan(*_creates("w3"), labels=LABELS))
    assert shown.count("+ qualifications[Gender].answers: Male (111), Female (112)\n") == 2


def test_a_markets_fields_are_shown_once_for_its_waves_created_together():
    shown = text.render(plan(*_creates("w1", "w2"), labels=LABELS))
    assert (
        "    + 2 of them (en_GB) (+$3,360.00)\n"
        "        + completes_required: 600\n"
        "        + offer_price: 2.8\n"
    ) in shown
    assert shown.count("+ offer_price: 2.8\n") == 1
    assert (
        "        + Survey/tracker[en_GB,w2] (+$1,680.00)\n"
        '            + survey_title: "Tracker GB w2"\n'
    ) in shown


def test_every_line_of_every_new_survey_is_in_the_text_plan():
    creates = _creates("w1", "w2")
    made = plan(*creates, labels=LABELS)
    shown = text.render(made)
    missing = [
        (resource.address, line)
        for resource in creates
        for line in _member_lines(made, resource)
        if line not in shown
    ]
    assert missing == []


def test_every_line_of_every_new_survey_is_in_the_comment():
    creates = _creates("w3")
    made = plan(*creates, labels=LABELS)
    comment = markdown.render(made)
    missing = [
        (resource.address, line)
        for resource in creates
        for line in _member_lines(made, resource)
        if line.lstrip("+ ") not in comment
    ]
    assert missing == []


def test_a_new_waves_creates_are_one_row_of_the_comment():
    comment = markdown.render(plan(*_creates("w3"), labels=LABELS))
    assert "| program `tracker` (3 surveys) | create | – | +$4,920.00 |" in comment
    assert "| `Survey/tracker[" not in comment


def test_a_change_every_member_has_is_shown_once_beside_a_markets_own_change():
    members = _updates(("w1", "w2"), FieldChange("expected_loi", 12, 15), en_GB=price(2.8, 3.0))
    shown = text.render(plan(*members))
    assert shown.count("~ expected_loi: 12 -> 15\n") == 1
    assert "~ 6 surveys of program tracker: expected_loi 12 -> 15\n" in shown


def test_a_markets_own_change_is_shown_once_under_the_shared_one():
    members = _updates(("w1", "w2"), FieldChange("expected_loi", 12, 15), en_GB=price(2.8, 3.0))
    shown = text.render(plan(*members))
    assert (
        "    ~ 2 of them (en_GB): offer_price 2.8 -> 3.0\n        ~ offer_price: 2.8 -> 3.0\n"
    ) in shown
    assert shown.count("offer_price: 2.8 -> 3.0") == 1


def test_a_change_made_to_one_wave_in_every_market_names_that_wave():
    members = _updates(("w1", "w2"), FieldChange("expected_loi", 12, 15))
    for member in members[1::2]:  # each market's w2
        member.changes.append(FieldChange("field_time", 14, 10))
    shown = text.render(plan(*members))
    assert "    ~ 3 of them (wave w2): field_time 14 -> 10\n" in shown


def test_the_comment_shows_a_shared_change_and_a_markets_override_as_one_row():
    members = _updates(("w1", "w2"), FieldChange("expected_loi", 12, 15), en_GB=price(2.8, 3.0))
    comment = markdown.render(plan(*members))
    assert "| program `tracker` (6 surveys) | update | expected_loi, offer_price | – |" in comment
    assert "!   2 of them (en_GB): offer_price 2.8 -> 3.0\n!     offer_price: 2.8 -> 3.0\n" in (
        comment
    )


def test_the_same_drift_on_several_members_is_shown_once():
    drifted = _drifted("tracker[en_US,w1]", "tracker[en_GB,w1]", "tracker[de_DE,w1]")
    shown = text.render(plan(*drifted))
    assert (
        "! 3 surveys of program tracker: drift expected_ir was 40 when last applied, is 30 live\n"
    ) in shown
    assert shown.count("! drift: expected_ir was 40 when last applied, is 30 live\n") == 1


def test_the_same_drift_on_some_members_of_a_change_is_shown_once_under_it():
    members = _updates(("w1", "w2"), FieldChange("expected_loi", 12, 15))
    for member in members[:2]:  # en_US's two waves
        member.drift = [FieldChange("expected_ir", 40, 30)]
    shown = text.render(plan(*members))
    assert (
        "    ! 2 of them (en_US): drift expected_ir was 40 when last applied, is 30 live\n"
    ) in shown
    assert shown.count("! drift: expected_ir") == 1


def test_different_drift_on_each_member_is_shown_per_member():
    drifted = _drifted("tracker[en_US,w1]", "tracker[en_GB,w1]")
    drifted[1].drift = [FieldChange("expected_ir", 40, 20)]
    shown = text.render(plan(*drifted))
    assert "of program" not in shown
    assert "  Survey/tracker[en_GB,w1] (ps_survey_id 10002) unchanged\n" in shown


def test_the_json_program_groups_still_hold_members_with_the_same_whole_change():
    members = _updates(("w1", "w2"), FieldChange("expected_loi", 12, 15), en_GB=price(2.8, 3.0))
    groups = json.loads(json_format.render(plan(*members)))["program_groups"]
    assert [(group["count"], group["changes"]) for group in groups] == [
        (4, ["expected_loi: 12 -> 15"]),
        (2, ["expected_loi: 12 -> 15", "offer_price: 2.8 -> 3.0"]),
    ]


def test_the_json_program_view_gives_each_member_every_line_its_own_entry_shows():
    members = [
        *_creates("w3"),
        *_updates(("w1", "w2"), FieldChange("expected_loi", 12, 15), en_GB=price(2.8, 3.0)),
        *[ResourceChange("Survey", f"tracker[{m},w0]", "delete", remote_id=9) for m in MARKETS],
    ]
    members[-4].drift = [FieldChange("expected_ir", 40, 30)]
    made = plan(*members, labels=LABELS)
    view = json.loads(json_format.render(made))["program_view"]
    shown: dict[str, list[str]] = {}

    def gather(group: dict) -> None:
        for address in group["members"]:
            shown.setdefault(address, []).extend(group["lines"])
        for part in group["parts"]:
            gather(part)

    for group in view:
        gather(group)
    expected = {r.address: sorted(_member_lines(made, r)) for r in members}
    assert {address: sorted(lines) for address, lines in shown.items()} == expected


def test_a_part_of_an_update_leaves_its_spend_to_the_groups_headline():
    members = _updates(("w1", "w2"), FieldChange("expected_loi", 12, 15), en_GB=price(2.8, 3.0))
    for member in members:
        member.spend = spend(1000.0, 1100.0 if "en_GB" in member.name else 1000.0)
    shown = text.render(plan(*members))
    assert "~ 6 surveys of program tracker: expected_loi 12 -> 15 (+$200.00)\n" in shown
    assert "    ~ 2 of them (en_GB): offer_price 2.8 -> 3.0\n" in shown


def test_creates_that_are_not_every_markets_same_waves_are_counted_in_the_headline():
    creates = [c for c in _creates("w1", "w2") if c.name != "tracker[de_DE,w1]"]
    shown = text.render(plan(*creates, labels=LABELS))
    assert "+ 5 surveys of program tracker will be created: 2 waves in 3 markets (" in shown
    assert "      members de_DE: w2\n" in shown
