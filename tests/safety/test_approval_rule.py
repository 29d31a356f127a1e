"""The one approval rule of every write (`needs_question`), case by case: who is asked, who goes
ahead, and what a refusal without a terminal tells the person to do."""

from __future__ import annotations

import pytest

from surveyctl.config import Environment
from surveyctl.safety import Approval, NotApproved, needs_question

STAGING = Environment("staging", host="https://staging.example.com", api_key_env="K")
PRODUCTION = Environment(
    "production", host="https://api.example.com", api_key_env="K", protected=True
)
ACTION = "move survey 10001 to live"


def _approval(approved=False, env_named=False, can_ask=False, flag="--yes") -> Approval:
    return Approval(approved=approved, env_named=env_named, can_ask=can_ask, flag=flag)


def test_an_unprotected_write_that_does_not_always_ask_goes_ahead_unapproved():
    assert needs_question(STAGING, ACTION, _approval()) is False


def test_a_command_that_always_asks_asks_on_a_terminal():
    assert needs_question(STAGING, ACTION, _approval(can_ask=True), always_asks=True) is True


def test_a_command_that_always_asks_goes_ahead_when_approved():
    assert needs_question(STAGING, ACTION, _approval(approved=True), always_asks=True) is False


def test_without_a_terminal_a_command_that_always_asks_says_how_to_confirm():
    with pytest.raises(NotApproved) as refused:
        needs_question(STAGING, ACTION, _approval(flag="--auto-approve"), always_asks=True)
    assert str(refused.value) == (
        "a confirmation is needed to move survey 10001 to live and there is no terminal to ask: "
        "confirm with --auto-approve"
    )


def test_the_hint_offers_another_way_out():
    with pytest.raises(NotApproved, match=r"confirm with --yes, or apply a reviewed plan file$"):
        needs_question(
            STAGING,
            ACTION,
            _approval(),
            always_asks=True,
            hint=", or apply a reviewed plan file",
        )


def test_a_protected_write_named_and_approved_goes_ahead():
    approval = _approval(approved=True, env_named=True)
    assert needs_question(PRODUCTION, ACTION, approval) is False


@pytest.mark.parametrize(
    "approval",
    [_approval(can_ask=True), _approval(approved=True, can_ask=True)],
    ids=["unapproved", "approved-but-not-named"],
)
def test_a_protected_write_asks_on_a_terminal_unless_named_and_approved(approval):
    assert needs_question(PRODUCTION, ACTION, approval) is True


def test_a_protected_write_approved_but_not_named_is_told_to_name_it():
    with pytest.raises(NotApproved) as refused:
        needs_question(PRODUCTION, ACTION, _approval(approved=True))
    assert str(refused.value) == (
        "environment 'production' is protected and there is no terminal to ask: to move survey "
        "10001 to live, name it with --env production"
    )


def test_a_protected_write_neither_named_nor_approved_is_told_both():
    with pytest.raises(NotApproved, match=r"name it with --env production and pass --yes$"):
        needs_question(PRODUCTION, ACTION, _approval(env_named=True))
