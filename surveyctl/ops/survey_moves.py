"""What a survey status move does, said before it is asked for or made.

Launching a survey commits money: the marketplace sends respondents until the goal is reached,
and each complete is paid at the offer_price (US dollars per complete, public facts). Closing
cannot be undone (the marketplace moves draft -> live <-> paused -> closed). So the question of
`surveyctl status SURVEY_ID NEW_STATUS` says which survey, where it is, and what the move does,
with the most a launch can cost, computed as the plan computes a survey's estimated spend:
offer_price x completes_required, exactly in decimal, rounded once to the cent.
"""

from __future__ import annotations

from surveyctl.fields import priced_individually
from surveyctl.money import cents, dollars, usd, usd_price
from surveyctl.statuses import CLOSED, LIVE, PAUSED


def what_the_move_does(survey: dict, wanted: int) -> str:
    """One sentence on what moving `survey` (its body as the service shows it) to `wanted`
    does: for a launch, the goal, the price per complete and the most it can cost."""
    if wanted == LIVE:
        return f"live, it takes respondents {_up_to_the_goal(survey)}"
    if wanted == PAUSED:
        return "paused, it takes no respondents until it is moved to live again"
    if wanted == CLOSED:
        return "closed, it takes no respondents and cannot be opened again"
    return "the marketplace moves it there"


def what_it_was_said_to_cost(survey: dict, wanted: int) -> str | None:
    """What `what_the_move_does` says moving `survey` to `wanted` costs, in the same words,
    for the history to keep; None for a move that spends nothing (a pause, a close)."""
    if wanted != LIVE:
        return None
    goal, price = _goal_and_price(survey)
    if goal is None or price is None:
        return f"an amount that cannot be told ({_NO_PRICE})"
    return f"up to {usd(cents(price * goal))} in US dollars{_priced_apart(survey)}"


# Why a launch's cost is not said.
_NO_PRICE = "the survey shows no numeric completes_required and offer_price"


def _goal_and_price(survey: dict):
    goal = survey.get("completes_required")
    if isinstance(goal, bool) or not isinstance(goal, int):
        goal = None
    return goal, dollars(survey.get("offer_price"))


def _up_to_the_goal(survey: dict) -> str:
    goal, price = _goal_and_price(survey)
    if goal is None or price is None:
        # The service's word on either is missing: the cost is not guessed.
        return f"until its goal is reached; what that costs cannot be told ({_NO_PRICE})"
    return (
        f"until its goal of {goal:,} completes is reached, each paid at {usd_price(price)} "
        f"(offer_price): {what_it_was_said_to_cost(survey, LIVE)}"
    )


def _priced_apart(survey: dict) -> str:
    """With quota based pricing, the quotas it names are priced individually, at prices the
    API does not show (spec 2.6 rule 5): the total above is then said to be the offer_price's."""
    ids = priced_individually(survey)
    if ids is None:
        return ""
    named = f" ({', '.join(ids)})" if ids else ""
    return (
        f" at the offer_price; its QBP quotas{named} are priced individually, at prices the "
        "API does not show, so what they cost is not in this sum"
    )
