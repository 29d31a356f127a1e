"""The commands surveyctl tells a user to run, carrying the options that chose where it ran.

A message suggests a command as `surveyctl SUB-COMMAND ...` in backticks. Pasted as it is,
such a line acts on the default environment and the configuration found from the current
folder, which need not be those the user chose (`--env local` on a machine whose default is
production). `CommandPrefix` is the one place that says which global options a suggestion must
carry, and `carry` gives them to every suggestion of a message before it is shown.

The environment is named when it was chosen with `--env` or $SURVEYCTL_ENV (the variable may
not be set where the line is pasted); the configuration when it was given with `--config`.
Nothing else of the command line is repeated: never the API key nor the state DSN, which no
global option carries anyway.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass

from surveyctl.shellwords import path_word

# A suggested command: `surveyctl` and its words, up to the closing backtick. `surveyctl.yaml`
# is a file name, not a command: the word must be followed by a space or the backtick.
_SUGGESTION = re.compile(r"`surveyctl(?=[ `])([^`\n]*)`")


@dataclass(frozen=True)
class CommandPrefix:
    """The global options a suggested command repeats: the environment's name and the
    configuration file, each None when the user did not choose it."""

    env: str | None = None
    config: str | None = None

    def options(self, rest: str = "") -> list[str]:
        """The words to put after `surveyctl`, leaving out an option `rest` names already
        (a suggestion that spells `--env NAME` itself)."""
        words = shlex.split(rest) if _splittable(rest) else rest.split()
        words_given = {word.split("=", 1)[0] for word in words}
        options: list[str] = []
        if self.config and "--config" not in words_given:
            options += ["--config", path_word(self.config)]
        if self.env and "--env" not in words_given:
            options += ["--env", shlex.quote(self.env)]
        return options

    def command(self, rest: str) -> str:
        """`surveyctl` with the prefix's options, then `rest` (`state rm ADDRESS`)."""
        return " ".join(["surveyctl", *self.options(rest), rest]).rstrip()

    def carry(self, text: str, json_string: bool = False) -> str:
        """`text` with each suggested command in it given the prefix's options; with
        `json_string`, `text` is JSON and the options are escaped as a JSON string's text."""
        if self.env is None and self.config is None:
            return text

        def prefixed(match: re.Match[str]) -> str:
            rest = match.group(1)
            options = " ".join(self.options(rest))
            if not options:
                return match.group(0)
            if json_string:
                options = json.dumps(options)[1:-1]
            return f"`surveyctl {options}{rest}`"

        return _SUGGESTION.sub(prefixed, text)


def _splittable(rest: str) -> bool:
    """Whether `rest` splits as shell words (a suggestion with an unbalanced quote does not)."""
    try:
        shlex.split(rest)
    except ValueError:
        return False
    return True
