"""How a number the service writes as text is read: one rule for the planner, the client's
counts, discovery's list, the status report and the conformance checks."""

import pytest

from surveyctl.numbers import as_number


@pytest.mark.parametrize(
    ("text", "number"),
    [("5", 5), ("-3", -3), ("1.30", 1.3), (" 7 ", 7), ("5.0", 5), (".5", 0.5), ("2e3", 2000)],
)
def test_a_number_written_as_text_is_read_as_that_number(text, number):
    read = as_number(text)
    assert read == number
    assert type(read) is type(number)


@pytest.mark.parametrize("blank", ["", "   "])
def test_blank_text_is_read_as_not_set(blank):
    assert as_number(blank) is None


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity", "1e999", "1_000", "٣", "²", "n/a"])
def test_text_that_names_no_finite_ascii_number_stays_as_it_came(text):
    assert as_number(text) == text


def test_an_integer_past_64_bits_is_read_as_a_float_that_a_body_can_carry():
    assert as_number("99999999999999999999") == pytest.approx(1e20)
    assert isinstance(as_number("99999999999999999999"), float)


def test_values_that_are_not_text_are_left_as_they_came():
    assert [as_number(v) for v in (5, 1.5, None, True, [1])] == [5, 1.5, None, True, [1]]
