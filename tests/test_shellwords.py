"""A path in a command surveyctl suggests is one word a shell reads as that file."""

from __future__ import annotations

from pathlib import Path

from surveyctl.shellwords import path_word


def test_a_plain_path_is_written_as_it_is():
    assert path_word(Path("plans/a.plan")) == "plans/a.plan"


def test_a_path_that_looks_like_an_option_is_written_from_the_current_folder():
    assert path_word(Path("./--format")) == "./--format"


def test_a_path_with_a_space_is_quoted():
    assert path_word("my plans/a.plan") == "'my plans/a.plan'"
