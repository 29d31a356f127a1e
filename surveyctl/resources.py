"""The resources surveyctl manages: their kinds, their addresses and the rule for their names.

A resource is a Survey or an ExclusionGroup described by a manifest. Its address,
`<Kind>/<name>`, is its identity in state, in plans and on the command line. The name rule is
the manifest schema's (`schemas/manifest.schema.json` uses the same pattern; a test keeps the
two equal), so every command that takes a name refuses what `validate` would refuse.

A SurveyProgram manifest expands into member resources whose name is the program's name with
its market and wave in brackets: `brand-tracker[en_GB,2026-11]`. Only a program makes such a
name (a Survey manifest's `name` keeps the plain rule); commands that take the name of a
resource in state (`render --name`, `--target`, `import --name`) take both forms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from surveyctl.errors import SurveyctlError

SURVEY = "Survey"
EXCLUSION_GROUP = "ExclusionGroup"
KINDS = (SURVEY, EXCLUSION_GROUP)  # the kinds a manifest may declare
PROGRAM = "SurveyProgram"
MANIFEST_KINDS = (SURVEY, EXCLUSION_GROUP, PROGRAM)  # with the kind that expands into them

# Every resource kind an address may name: the built-in ones, and any a kind module registers
# (`surveyctl.reconcile.kinds`). An address of any other kind is an error everywhere.
_KNOWN: list[str] = list(KINDS)

NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$"
NAME_RULE = "lowercase letters, digits and dashes, 1 to 63 characters, no dash at either end"
_NAME = re.compile(NAME_PATTERN)
# A market is a locale (language_COUNTRY); a wave an id such as 2026-11 or w07.
MARKET_PATTERN = r"^[a-z]{2}_[A-Z]{2}$"
WAVE_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9._-]{0,30}[A-Za-z0-9])?$"
_MEMBER = re.compile(
    r"^(?P<program>"
    + NAME_PATTERN[1:-1]
    + r")\[(?P<market>"
    + MARKET_PATTERN[1:-1]
    + r"),(?P<wave>"
    + WAVE_PATTERN[1:-1]
    + r")\]$"
)
# Any name a resource may have in state or a plan: a plain name or a program member's.
RESOURCE_NAME_PATTERN = "^(?:" + NAME_PATTERN[1:-1] + "|" + _MEMBER.pattern[1:-1] + ")$"
MEMBER_RULE = "a program name followed by [market,wave], e.g. brand-tracker[en_GB,2026-11]"
# The name of a survey in an exclusion group's `surveys`: a Survey manifest's or a program
# member's, without named groups, which the JSON Schema of manifests (ECMA-262) spells otherwise.
SURVEY_NAME_PATTERN = (
    "^(?:"
    + NAME_PATTERN[1:-1]
    + "|"
    + NAME_PATTERN[1:-1]
    + r"\["
    + MARKET_PATTERN[1:-1]
    + ","
    + WAVE_PATTERN[1:-1]
    + r"\])$"
)


class ResourceNameError(SurveyctlError):
    """A resource name or address that breaks the rule."""


def valid_name(name: str) -> bool:
    return bool(_NAME.match(name))


def check_name(name: str, what: str = "name") -> str:
    """`name` when it follows the rule; ResourceNameError naming the rule otherwise."""
    if not isinstance(name, str) or not valid_name(name):
        raise ResourceNameError(f"{what} {name!r} is not a valid resource name: use {NAME_RULE}")
    return name


@dataclass(frozen=True)
class Member:
    """Where a program member comes from: its program, market (locale) and wave."""

    program: str
    market: str
    wave: str

    @property
    def name(self) -> str:
        return member_name(self.program, self.market, self.wave)


def member_name(program: str, market: str, wave: str) -> str:
    """`brand-tracker[en_GB,2026-11]`."""
    return f"{program}[{market},{wave}]"


def member_of(name: str) -> Member | None:
    """The program, market and wave of a member name; None for a plain name."""
    if "[" not in name:
        return None
    match = _MEMBER.match(name)
    if match is None:
        return None
    return Member(match["program"], match["market"], match["wave"])


def check_resource_name(name: str, what: str = "name") -> str:
    """`name` when it is a plain name or a program member's name; ResourceNameError else."""
    if isinstance(name, str) and (valid_name(name) or member_of(name) is not None):
        return name
    raise ResourceNameError(
        f"{what} {name!r} is not a valid resource name: use {NAME_RULE}, or {MEMBER_RULE}"
    )


def register_kind(kind: str) -> None:
    """Makes `kind` a resource kind that addresses may name (once; idempotent)."""
    if kind not in _KNOWN:
        _KNOWN.append(kind)


def unregister_kind(kind: str) -> None:
    """Forgets a registered kind (one defined for a single test); the built-in ones stay."""
    if kind in _KNOWN and kind not in KINDS:
        _KNOWN.remove(kind)


def known_kinds() -> tuple[str, ...]:
    """Every registered resource kind, in registration order."""
    return tuple(_KNOWN)


def address(kind: str, name: str) -> str:
    """`Survey/<name>` or `ExclusionGroup/<name>`."""
    if kind not in _KNOWN:
        raise ValueError(f"unknown resource kind {kind!r}")
    return f"{kind}/{name}"


def split_address(value: str) -> tuple[str, str]:
    """(kind, name) of an address; ResourceNameError when it is not one."""
    kind, _, name = value.partition("/")
    if kind not in _KNOWN or not name:
        raise ResourceNameError(
            f"{value!r} is not a resource address; use Survey/<name> or ExclusionGroup/<name>"
        )
    return kind, name


def kind_of(value: str) -> str:
    """The kind of an address (`Survey` of `Survey/x`)."""
    return split_address(value)[0]


def name_of(value: str) -> str:
    """The name of an address (`x` of `Survey/x`)."""
    return split_address(value)[1]


# A name written as a program member's, whatever its parts: to say which part is wrong.
_MEMBER_SHAPE = re.compile(r"^(?P<program>[^\[\]]*)\[(?P<market>[^,\]]*),(?P<wave>[^\]]*)\]$")


def new_resource_name(name: str) -> str:
    """`name` when it is a plain resource name or a program member's, as a SurveyProgram names
    its members (`brand-tracker[de_DE,2026-09]`: the plan of a renamed program asks for such
    moves); ResourceNameError naming the rule, or the part of a member's name that breaks it."""
    if valid_name(name) or member_of(name) is not None:
        return name
    shape = _MEMBER_SHAPE.match(name)
    if shape is None:
        raise ResourceNameError(
            f"the new name {name!r} is not a valid resource name: use {NAME_RULE}, or {MEMBER_RULE}"
        )
    program, market, wave = shape["program"], shape["market"], shape["wave"]
    if not valid_name(program):
        wrong = f"its program name {program!r} must be {NAME_RULE}"
    elif not re.match(MARKET_PATTERN, market):
        wrong = f"its market {market!r} must be a locale, language_COUNTRY (de_DE)"
    else:
        wrong = (
            f"its wave {wave!r} must be 1 to 32 letters, digits, dots, dashes and underscores, "
            "starting and ending with a letter or digit"
        )
    raise ResourceNameError(f"the new name {name!r} is not a valid program member name: {wrong}")
