"""Members leaving a program (a wave or a market dropped, the program removed) are shown as
one group, as a new wave's creates are: the wave or markets that leave once, each member with
its own id and spend, and a note they share once; a refusal stays by name."""

from __future__ import annotations

import json

from surveyctl.reconcile.plan import Note, ResourceChange
from surveyctl.render import json as json_format
from surveyctl.render import markdown, text

from .plans import delete, plan, spend

# 20 markets: en_GB's survey spends $500.00, each other market's $750.00.
MARKETS = [
    f"{language}_{country}"
    for language in ("en", "de", "fr", "es")
    for country in ("GB", "US", "DE", "FR", "ES")
]
PROTECTED = "lifecycle.prevent_destroy forbids deleting it; restore its manifest or " + (
    "`surveyctl state rm` it"
)
RETIRED = "retired from program tracker: kept, never destroyed"
LIVE = "deleting a live survey stops its fieldwork"


def _dropped(wave: str = "w1", markets: list[str] = MARKETS) -> list[ResourceChange]:
    """The deletes of `wave` in every market, ps_survey_id 10001, 10002, ..."""
    return [
        delete(
            f"tracker[{market},{wave}]",
            remote_id=10001 + n,
            spend=spend(500.0 if market == "en_GB" else 750.0, None),
        )
        for n, market in enumerate(markets)
    ]


def _kept(wave: str = "w1") -> list[ResourceChange]:
    return [
        ResourceChange("Survey", f"tracker[{market},{wave}]", "no-op", remote_id=10001 + n)
        for n, market in enumerate(MARKETS)
    ]


def _notes(resources: list[ResourceChange], severity: str, message: str) -> list[Note]:
    return [Note(severity, r.address, message) for r in resources]


def test_a_wave_dropped_from_20_markets_is_destroyed_as_one_group():
    shown = text.render(plan(*_dropped()))
    assert shown.count("will be destroyed") == 1
    assert (
        "- 20 surveys of program tracker will be destroyed: wave w1 in markets en_GB, en_US, "
        "en_DE, en_FR, en_ES, de_GB, de_US, de_DE and 12 more (-$14,750.00)\n"
    ) in shown
    assert "Plan: 0 to add, 0 to change, 20 to destroy." in shown


def test_each_destroyed_member_is_listed_with_its_own_id_and_spend():
    shown = text.render(plan(*_dropped()))
    assert "      members en_GB: w1 (ps_survey_id 10001, -$500.00)\n" in shown
    assert "      members es_ES: w1 (ps_survey_id 10020, -$750.00)\n" in shown


def test_a_market_dropped_is_destroyed_as_one_group_naming_its_waves():
    leaving = [*_dropped("w1", ["fr_FR"]), *_dropped("w2", ["fr_FR"])]
    shown = text.render(plan(*leaving))
    assert "- 2 surveys of program tracker will be destroyed: waves w1, w2 in market fr_FR" in (
        shown
    )


def test_a_warning_every_destroyed_member_has_is_one_note_naming_them_all():
    dropped = _dropped()
    shown = text.render(plan(*dropped, notes=_notes(dropped, "warning", LIVE)))
    assert shown.count(LIVE) == 1
    assert (
        f"  warning: 20 surveys of program tracker, wave w1 in markets {', '.join(MARKETS)}: "
        f"{LIVE}\n"
    ) in shown


def test_a_note_of_one_member_alone_stays_under_its_address():
    dropped = _dropped()
    shown = text.render(plan(*dropped, notes=_notes(dropped[:1], "warning", LIVE)))
    assert f"  warning: Survey/tracker[en_GB,w1]: {LIVE}\n" in shown


def test_a_protected_members_refusal_is_shown_by_name_beside_the_group_of_the_others():
    dropped = _dropped()
    protected = ResourceChange("Survey", dropped[5].name, "no-op", remote_id=10006)
    others = [r for r in dropped if r is not dropped[5]]
    refusals = _notes([protected, others[0]], "error", PROTECTED)
    shown = text.render(plan(*others, protected, notes=refusals))
    assert "- 19 surveys of program tracker will be destroyed: " in shown
    assert f"  error: Survey/tracker[de_GB,w1]: {PROTECTED}\n" in shown
    assert f"  error: Survey/tracker[en_GB,w1]: {PROTECTED}\n" in shown  # never folded


def test_a_retired_waves_notes_are_one_note_naming_its_members():
    kept = _kept()
    shown = text.render(plan(*kept, notes=_notes(kept, "note", RETIRED), retired=[]))
    assert shown.count(RETIRED) == 1
    assert (
        f"  note: 20 surveys of program tracker, wave w1 in markets {', '.join(MARKETS)}: "
        f"{RETIRED}\n"
    ) in shown


def test_members_not_of_one_wave_are_named_market_by_market_in_their_note():
    kept = [
        ResourceChange("Survey", name, "no-op", remote_id=10001 + n)
        for n, name in enumerate(["tracker[en_GB,w1]", "tracker[en_GB,w2]", "tracker[fr_FR,w1]"])
    ]
    shown = text.render(plan(*kept, notes=_notes(kept, "note", RETIRED)))
    assert f"  note: 3 surveys of program tracker, en_GB: w1, w2; fr_FR: w1: {RETIRED}\n" in (shown)


def test_the_comment_shows_a_dropped_wave_as_one_row_and_one_note():
    dropped = _dropped()
    comment = markdown.render(plan(*dropped, notes=_notes(dropped, "warning", LIVE)))
    assert "| program `tracker` (20 surveys) | **destroy** | – | -$14,750.00 |" in comment
    assert comment.count(LIVE) == 1
    assert "- `Survey/tracker[en_GB,w1]` (ps_survey_id 10001, -$500.00)" in comment


def test_the_json_plan_keeps_each_members_note_and_shows_the_group_in_its_program_view():
    dropped = _dropped()
    document = json.loads(
        json_format.render(plan(*dropped, notes=_notes(dropped, "warning", LIVE)))
    )
    (group,) = document["program_view"]
    assert (group["action"], group["count"], group["spend_delta"]) == (
        "delete",
        20,
        "-$14,750.00",
    )
    assert group["members"] == [r.address for r in dropped]
    assert [note["address"] for note in document["notes"]] == [r.address for r in dropped]
