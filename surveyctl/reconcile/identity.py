"""Identity: the resource on the service that a manifest describes, whatever the state says.

The state records what surveyctl made; it is not the only proof of it. A state can be lost (a
CI checkout starts without `.surveyctl/`), emptied or kept somewhere else, and a plan made
from it would create every survey a second time. So before a plan creates anything it looks
for the resource on the service, among what this environment's state does not manage
(docs/state.md, "Identity"):

- A survey is the manifest's when both have the same `survey_title` and
  `survey_localization` (rule `title`, the default). Closed surveys do not count under this
  rule: a tracker's earlier waves share the title of the next wave, and a rule that withheld
  every new wave would be as useless as one that duplicates. They are named in a note.
- With `identity: external_project_id` on the environment, every create carries
  `external_project_id: <environment>/<address>` (unless the manifest sets one), and a survey
  with that value is the manifest's whatever its status; a survey with no external_project_id
  still matches by title and locale as above (made before the opt-in, or by hand), and so does
  one stamped for an address no manifest describes in this environment (a renamed manifest or
  environment: the stamp stays); one with another value is another resource. A manifest that
  sets external_project_id itself is matched by it under either rule.
- An exclusion group is the manifest's when it has its `buyer_surveygroup_ref`, which the
  service keeps globally unique (one GET per group to be created).

Each kind applies its own rule (`Kind.find_twins`: surveys in `kinds/survey_twins.py`, among
every survey of the account as `surveyctl.api.account_surveys` reads them, groups in
`kinds/group.py`; a kind without one creates as before); `surveyctl.reconcile.twins` asks
the kinds only when a create is due (a plan without creates costs no request more: for surveys
the survey list, all statuses and pages, once, its pages read in parallel), and
`surveyctl.reconcile.adoption` settles the plan by what they found. One twin: the create is
withheld with an error note giving the two ways out (`surveyctl import`, or `--adopt`), or with
`--adopt` the twin is recorded (`Plan.recovered`, written by apply before its writes) and the
plan goes on against it as an ordinary update. Several twins (or one twin that two manifests
claim): all named, withheld, and `--adopt` does not choose. `--allow-duplicate` lets the create
through, with a warning naming the twins. The recovery of a create whose answer was lost
(`surveyctl.reconcile.recovery`) uses `same_survey`, the one definition of the same survey.

This module holds the rule, what a rule finds (`Twin`, `Identity`) and `same_survey`; the
reading, the survey kind's search and what the plan makes of the findings are in the modules
named above.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field

from surveyctl.config import Environment
from surveyctl.config_checks import valid_environment_name
from surveyctl.resources import SURVEY, member_of, valid_name
from surveyctl.state import Record
from surveyctl.statuses import survey_status_name

# The named options of plan and apply (recorded in a saved plan with the guard overrides).
ADOPT = "adopt"
DUPLICATE = "duplicate"
TITLE = "title"
EXTERNAL_ID = "external_project_id"


@dataclass(frozen=True)
class Rule:
    """An environment's identity rule: `by` is "title" or "external_project_id"."""

    environment: str
    by: str = TITLE

    @classmethod
    def of(cls, environment: Environment) -> Rule:
        return cls(environment.name, environment.identity)

    def external_id(self, resource_address: str) -> str:
        """The external_project_id surveyctl gives a survey it creates under this rule."""
        return f"{self.environment}/{resource_address}"


@dataclass(frozen=True)
class Twin:
    """A resource on the service that is the manifest's, by the rule (`why`)."""

    remote_id: int | str  # ps_survey_id, or buyer_surveygroup_ref
    why: str  # "same title and locale", "same external_project_id", "same reference"
    status: int | None = None
    created: str | None = None
    noun: str = "survey"  # the kind's noun: "survey", "group"
    # The address the state manages it as, when no manifest describes that address any more
    # (a renamed manifest): the create would duplicate a resource surveyctl made.
    managed_as: str | None = None
    # The whole live resource, when the search read it so (a group's GET by its reference):
    # adopting it records it from that read instead of reading it a second time.
    body: dict | None = field(default=None, compare=False, repr=False)

    @property
    def duplicable(self) -> bool:
        """Whether another one can be created beside it: not a group, whose reference the
        service keeps unique."""
        return self.noun == "survey"

    def shown(self) -> str:
        managed = f", managed as {self.managed_as}" if self.managed_as else ""
        if self.noun != "survey":
            return f"{self.noun} {self.remote_id}{managed}"
        created = f", created {self.created}" if self.created else ""
        return f"survey {self.remote_id} ({survey_status_name(self.status)}{created}{managed})"

    def import_command(self, name: str, remote_id: object = None) -> str:
        """The command that adopts it (or, with `remote_id` "ID", any one) as manifest `name`,
        quoted for a shell where it needs to be (a program member's name)."""
        command = "import" if self.noun == "survey" else f"import-{self.noun}"
        chosen = self.remote_id if remote_id is None else remote_id
        return f"`surveyctl {command} {chosen} --name {shlex.quote(name)}`"


@dataclass
class Identity:
    """What `find_twins` found for the creates of a plan, by address."""

    twins: dict[str, list[Twin]] = field(default_factory=dict)
    earlier: dict[str, list[Twin]] = field(default_factory=dict)  # closed, same title: waves
    unchecked: dict[str, str] = field(default_factory=dict)  # why it could not be looked for
    # Managed addresses that no manifest describes (removed or renamed manifests): a twin
    # managed as one of them is a rename, not a survey the state lost.
    unlisted: set[str] = field(default_factory=set)
    described: set[str] = field(default_factory=set)  # the addresses the manifests describe
    # The programs the manifests describe: a member managed under a program none of them names
    # any more is a renamed program's, and a program still named was split, not renamed.
    programs: set[str] = field(default_factory=set)
    refused: dict[str, str] = field(default_factory=dict)  # a create the service would refuse
    adopted: dict[str, Record] = field(default_factory=dict)  # with --adopt: one twin each
    # The live body each adopted record was made from: the plan of the same run plans the
    # adopted resource from it rather than reading it a second time (LiveReads.given).
    bodies: dict[str, dict] = field(default_factory=dict)
    requests: int = 0  # reads made (for the benchmark and the tests)

    def renamed(self) -> dict[str, Twin]:
        """Creates whose one twin the state manages under an address no manifest describes."""
        return {
            a: twins[0]
            for a, twins in self.twins.items()
            if len(twins) == 1 and twins[0].managed_as is not None
        }

    def ambiguous(self) -> dict[str, list[Twin]]:
        """Twins --adopt cannot take: several for one manifest, or one several manifests claim."""
        claims = Counter(t.remote_id for twins in self.twins.values() for t in twins)
        return {
            a: twins
            for a, twins in self.twins.items()
            if len(twins) > 1 or claims[twins[0].remote_id] > 1
        }


def stamped(body: dict, resource_address: str, rule: Rule) -> dict:
    """The body a create sends: with the external_project_id the rule fills in."""
    if rule.by != EXTERNAL_ID or body.get(EXTERNAL_ID):
        return body
    return {**body, EXTERNAL_ID: rule.external_id(resource_address)}


def same_survey(
    listed: dict,
    body: dict,
    resource_address: str,
    rule: Rule,
    described: Collection[str] | None = None,
) -> str | None:
    """Why survey `listed` is the one `body` (a manifest's) describes, or None: the one
    definition of "the same survey" for creates, lost creates and `state rebuild`.

    `described` (the addresses the manifests describe, where the caller knows them): a survey
    stamped by the external_project_id rule for an address none of them is in this
    environment, or in another environment, is matched by title and locale instead. Such a
    stamp is what a renamed manifest (`state mv` included), or a renamed environment, leaves
    on the service; taking it for another resource would create the survey a second time."""
    wanted = stamped(body, resource_address, rule).get(EXTERNAL_ID)
    theirs = listed.get(EXTERNAL_ID)
    if wanted and theirs:
        if theirs == wanted:
            return "same external_project_id"
        if described is None or not _stamp_of_no_manifest(theirs, rule, described):
            return None
    if (listed.get("survey_title"), listed.get("survey_localization")) == (
        body.get("survey_title"),
        body.get("survey_localization"),
    ):
        return "same title and locale"
    return None


def _stamp_of_no_manifest(value: object, rule: Rule, described: Collection[str]) -> bool:
    """Whether `value` is an external_project_id this rule stamps (`<environment>/Survey/<name>`)
    but not the one of an address `described` holds in this environment."""
    if not isinstance(value, str):
        return False
    environment, _, resource_address = value.partition("/")
    kind, _, name = resource_address.partition("/")
    if not valid_environment_name(environment) or kind != SURVEY:
        return False
    if not (valid_name(name) or member_of(name) is not None):
        return False
    return environment != rule.environment or resource_address not in described
