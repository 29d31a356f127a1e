"""Mutation score of the safety-critical modules: how many small faults the tests catch.

For each module, mutmut (pip install -e '.[mutation]') changes the code one small fault at a
time (a `>` for a `>=`, a dropped `not`, another constant) and runs the tests that cover it; a
mutant the tests do not fail on "survived", and shows a behaviour no test pins down. The
score of a module is killed / (mutants - equivalent ones), where an equivalent mutant is one
that no behaviour can tell from the original (listed in EQUIVALENT, each with the reason).

One module at a time, one test process at a time (the machine is small and shared), each in
a scratch copy of the repository so the working tree is never touched; the normal test suite
does not run this. Usage:

    python benchmarks/mutation.py                      # every module
    python benchmarks/mutation.py guards safety         # some of them
    python benchmarks/mutation.py guards --survivors    # and print each survivor's diff
    python benchmarks/mutation.py guards --again        # only the last run's survivors again
    python benchmarks/mutation.py applier --resume      # only what a stopped run did not try
    python benchmarks/mutation.py applier --only 'surveyctl.reconcile.apply.x__run_one__*'

The scratch copies are made under /tmp/surveyctl-mutation, or under the folder named by the
environment variable SURVEYCTL_MUTATION_SCRATCH (one per working tree, when several run).

`--again` is for the tests written for the survivors: it copies the tests as they are now into
the scratch copy and runs only the mutants that survived the last run of the module (a killed
mutant stays killed when tests are added), so the new score takes minutes, not the whole run.
`--resume` does the same for the mutants a stopped run never tried.

`--only PATTERN` (a glob on mutmut's names, as `--survivors` prints them; repeat it for more)
tries only the mutants it matches, those named equivalent left out, all of them again even if
tried before: a module whose whole run takes hours can be measured one function at a time. It
makes the scratch copy when there is none (or its settings differ), and then counts the
mutants it did not match as not tried; else it copies the tests as `--again` does.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
# Where the scratch copies are made; SURVEYCTL_MUTATION_SCRATCH names another folder, so that
# runs of the same target from two working trees do not overwrite each other's mutants.
SCRATCH = Path(os.environ.get("SURVEYCTL_MUTATION_SCRATCH") or "/tmp/surveyctl-mutation")
# What the tests read beside the package (schemas, the CI examples, the docs they check).
COPIED = ("surveyctl", "tests", "schemas", "examples", "docs", "README.md", "surveyctl.yaml")


@dataclass(frozen=True)
class Target:
    """A module to mutate and the tests that cover it; a module split in several files is
    still one target (`modules` names them all), so that its score stays comparable."""

    modules: str | tuple[str, ...]
    tests: tuple[str, ...]

    @property
    def files(self) -> tuple[str, ...]:
        return (self.modules,) if isinstance(self.modules, str) else self.modules

    @property
    def shown(self) -> str:
        return " + ".join(self.files)


_RECONCILE_UNITS = (
    "tests/reconcile/test_merge.py",
    "tests/reconcile/test_merge_edges.py",
    "tests/reconcile/test_diff.py",
    "tests/reconcile/test_diff_edges.py",
    "tests/reconcile/test_normalise.py",
    "tests/reconcile/test_normalise_edges.py",
)
TARGETS = {
    "merge": Target("surveyctl/reconcile/merge.py", _RECONCILE_UNITS),
    "diff": Target("surveyctl/reconcile/diff.py", _RECONCILE_UNITS),
    "normalise": Target("surveyctl/reconcile/normalise.py", _RECONCILE_UNITS),
    "guards": Target(
        "surveyctl/reconcile/guards.py",
        ("tests/safety/test_guards.py", "tests/safety/test_guard_boundaries.py"),
    ),
    "tamper": Target(
        "surveyctl/reconcile/tamper.py",
        (
            "tests/reconcile/test_tamper_checks.py",
            "tests/hostile/test_saved_plans.py",
            "tests/hostile/test_saved_plan_checks.py",
            "tests/safety/test_plan_trust.py",
            "tests/safety/test_guards.py",
        ),
    ),
    "generate": Target(
        "surveyctl/manifests/generate.py",
        ("tests/manifests/test_generate.py", "tests/manifests/test_generate_edges.py"),
    ),
    "safety": Target(
        "surveyctl/safety.py",
        (
            "tests/safety/test_sandbox_hosts.py",
            "tests/safety/test_interrupts.py",
            "tests/safety/test_approval_rule.py",
            "tests/safety/test_protected.py",
            "tests/safety/test_output_paths.py",
            "tests/safety/test_output_checks.py",
            "tests/safety/test_output_rights.py",
            "tests/safety/test_output_file.py",
            # Not test_interrupted_apply.py: its applies run in processes of their own, which
            # import the unmutated package, so it cannot tell a mutant from the original.
        ),
    ),
    # Identity: the rule (reconcile/identity.py), the account's surveys it reads, the survey
    # kind's search, and what a plan makes of a twin (adoption.py): one module until split.
    "identity": Target(
        (
            "surveyctl/reconcile/identity.py",
            "surveyctl/api/account_surveys.py",
            "surveyctl/reconcile/kinds/survey_twins.py",
            "surveyctl/reconcile/adoption.py",
        ),
        (
            "tests/state/test_identity.py",
            "tests/state/test_twins_on_every_page.py",
            "tests/reconcile/test_renamed_manifest.py",
            "tests/state/test_mv_program_members.py",
            "tests/hostile/test_recovery.py",
            "tests/reconcile/test_programs.py",
            "tests/reconcile/test_program_renames.py",
            # The survey list's pages as a service may answer them: a page repeating the one
            # before, a billion pages announced, full pages without end (offline, seconds).
            "tests/hostile/test_service_pages.py",
            "tests/hostile/test_hostile_pages.py",
        ),
    ),
    # How a plan finds the twins of its creates, kind by kind, and adopts one (--adopt).
    "twins": Target(
        "surveyctl/reconcile/twins.py",
        (
            "tests/state/test_identity.py",
            "tests/reconcile/test_renamed_manifest.py",
            "tests/hostile/test_recovery.py",
        ),
    ),
    # What recovery makes of a create whose answer was lost: adopted, planned again once it
    # settled, or held back.
    "lost": Target(
        "surveyctl/reconcile/lost.py",
        (
            "tests/hostile/test_recovery.py",
            "tests/reconcile/test_apply_safety.py",
            "tests/state/test_unrecordable_apply.py",
        ),
    ),
    # Where the state is: refusals of an empty backend while the other holds the state, of a
    # file a migrate copied elsewhere, and of CI creating from an empty local state.
    "placement": Target(
        "surveyctl/state/placement.py",
        (
            "tests/state/test_identity.py",
            "tests/state/test_migrate_parted_copies.py",
            "tests/state/test_migrate.py",
        ),
    ),
    # Saved plans: checksum, signature, size and shape of a file read as untrusted input.
    "planfile": Target(
        "surveyctl/reconcile/planfile.py",
        (
            "tests/hostile/test_saved_plans.py",
            "tests/hostile/test_saved_plan_checks.py",
            "tests/hostile/test_saved_plan_scope.py",
            "tests/safety/test_plan_trust.py",
            "tests/safety/test_ci_plan_artifact.py",
            "tests/hostile/test_saved_plan_versions.py",
        ),
    ),
    # The state lock of the file backend: one holder at a time, a clear refusal naming it.
    # Not test_processes.py: its applies run in processes of their own (see "safety").
    "lock": Target(
        (
            "surveyctl/state/lock.py",
            "surveyctl/state/file/lock.py",
            "surveyctl/state/file/lock_record.py",
            "surveyctl/processes.py",
        ),
        ("tests/state/test_lock.py", "tests/state/test_cli_state.py"),
    ),
    # The list-mode read decision: which managed surveys the list shows changed, and which
    # of them a plan reads fresh.
    "listing": Target(
        "surveyctl/reconcile/kinds/survey_listing.py", ("tests/reconcile/test_list_reads.py",)
    ),
    "reads": Target(
        "surveyctl/reconcile/reads.py",
        (
            "tests/reconcile/test_list_reads.py",
            "tests/reconcile/test_background_reads.py",
            "tests/reconcile/test_read_switching.py",
            "tests/reconcile/test_refresh_only.py",
            "tests/hostile/test_partial_progress.py",
        ),
    ),
    # The quick schema check: it says yes only where jsonschema would, to state records, saved
    # plans and manifests (anything else goes to jsonschema, whose messages stand).
    "quickschema": Target(
        "surveyctl/quickschema.py",
        ("tests/state/test_quickschema.py", "tests/manifests/test_quick_check.py"),
    ),
    # An answer read within bounds: dropped once larger than 64 MiB or still coming when
    # --timeout is up, else read whole (decoded as the service encoded it).
    "body": Target("surveyctl/api/body.py", ("tests/hostile/test_answer_bounds.py",)),
    # A DELETE answered 404 after the plan read its resource: done (its first answer lost to a
    # retry), forgotten and said so; any other refusal fails and keeps the state. Only the
    # faults of delete_gone are measured: --only 'surveyctl.reconcile.kinds.base.x_delete_gone__*'.
    "gone": Target("surveyctl/reconcile/kinds/base.py", ("tests/hostile/test_recovery.py",)),
    # The client's rate finding: fewer requests in flight and a slower pace after a 429, more
    # and faster after successes, never slowed by a service that does not refuse.
    "throttle": Target("surveyctl/api/throttle.py", ("tests/api/test_throttle.py",)),
    # Retries: Retry-After honoured, every retry announced, the wait bounded by --timeout,
    # failures put in words.
    "retry": Target(
        "surveyctl/api/retry.py",
        (
            "tests/safety/test_unreachable.py",
            "tests/sandbox/test_rate_limit.py",
            "tests/sandbox/test_faults.py",
            "tests/api/test_throttle.py",
            "tests/api/test_tolerant_client.py",
            "tests/api/test_retry.py",
        ),
    ),
    # The cache of manifest files read before: a file is read from it only when its bytes and
    # the reader are those of a clean read, and anything else is read afresh.
    "cache": Target("surveyctl/manifests/cache.py", ("tests/manifests/test_cache.py",)),
    # Money: what `surveyctl adjust` asks before it submits, what it refuses (a protected
    # environment, transactions an earlier adjustment carried, a file naming another survey)
    # and what it says and records once the service answered.
    # Not test_adjust_in_flight.py: its adjustments run in processes of their own (see "safety").
    "adjust": Target(
        "surveyctl/cli/adjust.py",
        (
            "tests/ops/test_adjust_cli.py",
            "tests/safety/test_adjust_answers.py",
            "tests/safety/test_adjust_faults.py",
            "tests/safety/test_adjust_journal_account.py",
            "tests/safety/test_adjust_lost_answer.py",
            "tests/safety/test_protected_refusal_first.py",
            "tests/safety/test_protected.py",
        ),
    ),
    # The rules of the spec beyond the schema, checked before any call: QLC and QBP need quotas,
    # no other QLC option while QLC is off, quota ids that name a quota once and not a route,
    # one way of targeting per criterion, recontact surveys kept out of groups, the groups'
    # references and members; each refusal at the line of its field.
    "rules": Target(
        "surveyctl/manifests/rules.py",
        (
            "tests/manifests/test_rules.py",
            "tests/manifests/test_rules_beside_schema_errors.py",
            "tests/manifests/test_names.py",
            "tests/manifests/test_programs.py",
            "tests/manifests/test_generate_edges.py",
            "tests/manifests/test_schema.py",
            "tests/manifests/test_cli.py",
        ),
    ),
    # A program's members: one survey per market and wave, each with its market's and wave's
    # spec merged over the template and its variables, and the exclusion groups between waves.
    # Not tests/reconcile/test_programs.py: it plans over HTTP, and each fault it runs for
    # takes a minute; what a program expands into is checked offline.
    "programs": Target(
        "surveyctl/manifests/programs.py",
        ("tests/manifests/test_programs.py", "tests/manifests/test_program_bounds.py"),
    ),
    # A survey's writes: the full-overwrite PUT (the merged body, ignored fields as last
    # applied), the per-quota PUTs and what a failed one records, the record of each write.
    # Only the faults of the writes and the update they send are measured (the plan's reads
    # and recovery have their own targets): --only once per function, as docs/safety.md says.
    "survey": Target(
        "surveyctl/reconcile/kinds/survey.py",
        (
            "tests/reconcile/test_plan_apply.py",
            "tests/reconcile/test_closed_surveys.py",
            "tests/reconcile/test_group_references.py",
            "tests/hostile/test_recovery.py",
        ),
    ),
    # A group's writes: the PUT body (survey names turned into ids, ignored fields kept as
    # live), the planned body and its pending members, the record of each write. Only the
    # faults of those are measured (--only, as for "survey").
    "group": Target(
        "surveyctl/reconcile/kinds/group.py",
        (
            "tests/reconcile/test_group_ignore_changes.py",
            "tests/reconcile/test_group_references.py",
            "tests/reconcile/test_group_update_answers.py",
            "tests/reconcile/test_plan_apply.py",
        ),
    ),
    # What a survey's manifest and live body become in a plan: create, update, quota-update or
    # no-op (read, or left unread as the list shows it), the changes and drift shown, the
    # body recorded, the notes. Only the plan's functions are measured (the writes are
    # "survey"'s): --only once per function, as docs/safety.md says.
    "survey-plan": Target(
        "surveyctl/reconcile/kinds/survey.py",
        (
            "tests/reconcile/test_plan_apply.py",
            "tests/reconcile/test_closed_surveys.py",
            "tests/reconcile/test_group_references.py",
            "tests/reconcile/test_list_reads.py",
            "tests/reconcile/test_priced_apart.py",
        ),
    ),
    # What a group's manifest and live body become in a plan: create, update or no-op, the
    # members (pending ones by name), the fields kept as live, the drift, the notes of a
    # changed reference. Only the plan's functions are measured (--only, as for "survey-plan").
    "group-plan": Target(
        "surveyctl/reconcile/kinds/group.py",
        (
            "tests/reconcile/test_group_ignore_changes.py",
            "tests/reconcile/test_group_references.py",
            "tests/reconcile/test_group_update_answers.py",
            "tests/reconcile/test_plan_apply.py",
        ),
    ),
    # What the state records of each survey and group, and reads back: a record lost or
    # read otherwise loses a survey (planned as a create again) or its last applied body.
    "records": Target(
        "surveyctl/state/records.py",
        (
            "tests/state/test_file_store.py",
            "tests/state/test_state_checks.py",
            "tests/state/test_cli_state.py",
            "tests/state/test_newer_state.py",
            # The only tests that register a record type: the core's registered at import.
            "tests/reconcile/test_kind_registry.py",
        ),
    ),
    # The applier: every write it makes recorded at once, a failed write not stopping the
    # others, a stopped or unrecordable apply attempting nothing more, and saying what it did.
    "applier": Target(
        "surveyctl/reconcile/apply.py",
        (
            "tests/reconcile/test_plan_apply.py",
            "tests/reconcile/test_apply_safety.py",
            "tests/reconcile/test_apply_report.py",
            "tests/reconcile/test_applier_outcomes.py",
            "tests/hostile/test_partial_progress.py",
            "tests/hostile/test_recovery.py",
            "tests/reconcile/test_list_reads.py",
            "tests/state/test_interrupted_backends.py",
            "tests/state/test_unrecordable_apply.py",
            "tests/safety/test_interrupts.py",
        ),
    ),
    # The state lock in PostgreSQL: a session advisory lock that dies with its holder, a
    # holder row believed only while that session holds the lock, force-unlock by ID.
    "pglock": Target(
        "surveyctl/state/postgres/lock.py",
        (
            "tests/state/test_postgres_store.py",
            "tests/state/test_backends_cli.py",
            "tests/state/test_unrecordable_apply.py",
        ),
    ),
    # The planner's rules for what left the manifests: kept without --destroy, never deleted
    # past prevent_destroy or a program's retired waves, forgotten when already gone, held
    # back when it cannot be read; and the creates held back by an unresolved attempt.
    "planner": Target(
        "surveyctl/reconcile/planner.py",
        (
            "tests/reconcile/test_plan_apply.py",
            "tests/hostile/test_saved_plan_checks.py",
            "tests/reconcile/test_programs.py",
            "tests/reconcile/test_summaries.py",
            "tests/reconcile/test_closed_surveys.py",
            "tests/reconcile/test_applier_outcomes.py",
            "tests/hostile/test_partial_progress.py",
            "tests/hostile/test_recovery.py",
            "tests/safety/test_guards.py",
        ),
    ),
    # The API key out of every text a person sees: as is, stripped, escaped as Python and
    # JSON encoders write it, percent-encoded; never ordinary words with it. redacting.py is
    # where the output streams, exports and answer files pass their text through it, a key
    # written in pieces held until it shows whole.
    "secrets": Target(
        ("surveyctl/api/secrets.py", "surveyctl/redacting.py"),
        (
            "tests/hostile/test_api_key.py",
            "tests/hostile/test_redaction.py",
            # Not test_output_redaction.py: some of its commands run in processes of their
            # own, which fail in the scratch copy; its tests of the streams in this process
            # moved here.
            "tests/hostile/test_stream_redaction.py",
        ),
    ),
    # Money, the file side: which transaction ids an adjustment file names (CSV, JSON, an
    # export edited down), which survey each belongs to, and what is said of a lost answer.
    "adjustfile": Target(
        "surveyctl/ops/adjust.py",
        (
            "tests/ops/test_adjust_cli.py",
            "tests/ops/test_answers_and_uploads.py",
            "tests/safety/test_adjust_answers.py",
            "tests/safety/test_adjust_faults.py",
            "tests/safety/test_adjust_lost_answer.py",
            "tests/safety/test_adjust_journal_records.py",
        ),
    ),
    # Money, one transaction: `transactions set-status` asks before it writes a status that
    # decides what is paid, refuses a closed transaction and quota ids the complete would not
    # count in, and says what became of a write whose answer was lost; and `transactions
    # list`, whose table and exports are what a reconciliation is prepared from.
    "transactions": Target(
        "surveyctl/cli/transactions.py",
        (
            "tests/api/test_transaction_status_cli.py",
            "tests/ops/test_transactions_cli.py",
            "tests/ops/test_tables_piped.py",
            "tests/ops/test_output_spelling.py",
            "tests/api/test_tolerant_client.py",
            "tests/safety/test_protected_refusal_first.py",
        ),
    ),
    # The adjustment journal: every submission written before it is sent, so that a lost
    # answer is never submitted again unasked.
    "journal": Target(
        "surveyctl/ops/adjust_journal.py",
        (
            "tests/ops/test_adjust_cli.py",
            "tests/safety/test_adjust_answers.py",
            "tests/safety/test_adjust_faults.py",
            "tests/safety/test_adjust_journal_account.py",
            "tests/safety/test_adjust_lost_answer.py",
            "tests/safety/test_adjust_journal_records.py",
            "tests/ops/test_answers_and_uploads.py",
        ),
    ),
}

# Mutants no test can kill because no behaviour tells them from the original:
# mutmut's name -> why. Named in the closing notes too.
_DIFF = "surveyctl.reconcile.diff."
_SAME_LENGTH = (
    "zip(strict=True) made lenient: its two sides always have the same length (the values of "
    "two dicts with equal keys, or two lists of equal length)"
)
_LISTS_ON_BOTH_SIDES = (
    "DeepDiff reports below a prefix only where both sides hold the same container there, "
    "so a list at a prefix of the path is on both sides or on neither"
)
_IN_FIELD_ORDER = (
    "every change's top field is in the field order: normalise_survey and normalise_group "
    "keep only the API's update (or group) fields"
)
EQUIVALENT: dict[str, str] = {
    _DIFF + "x__all_identical__mutmut_3": _SAME_LENGTH,
    _DIFF + "x__all_identical__mutmut_6": _SAME_LENGTH,
    _DIFF + "x__all_identical__mutmut_7": _SAME_LENGTH,
    _DIFF + "x__at__mutmut_4": "no NotPresent is ever stored in the bodies _at walks",
    _DIFF + "x__diff__mutmut_16": _LISTS_ON_BOTH_SIDES,
    _DIFF + "x__diff__mutmut_17": _LISTS_ON_BOTH_SIDES,
    _DIFF + "x__leaf_parts__mutmut_8": _LISTS_ON_BOTH_SIDES,
    _DIFF + "x__leaf_parts__mutmut_3": "length 0 looks at the whole body, a dict, never a list",
    _DIFF + "x__leaf_parts__mutmut_7": "one step past the path is the whole path again",
    _DIFF + "x__diff__mutmut_52": _IN_FIELD_ORDER,
    _DIFF + "x__diff__mutmut_54": _IN_FIELD_ORDER,
    _DIFF + "x__diff__mutmut_56": "the second sort key only parts fields of one order index, "
    "i.e. one field, whose changes the path then orders",
    _DIFF + "x__expand__mutmut_36": "sorted without key=str: the keys of one object are all "
    "names, or all qualification codes (integers once normalised)",
    _DIFF + "x__expand__mutmut_38": "as x__expand__mutmut_36",
    _DIFF + "x__identical__mutmut_21": "unreachable: normalised bodies hold only dicts, lists "
    "and JSON scalars, which the branches before it (and _all_identical) handle",
    _DIFF + "x__identical__mutmut_4": "unreachable: both sides are dicts at the top, and "
    "_all_identical compares the types before it recurses",
}

_NORMALISE = "surveyctl.reconcile.normalise."
_FAST_PATH = (
    "only a fast path is lost: the value takes the general way, which gives the same result"
)
_SAME_WAY = (
    "the recursion converts each level by its own field name anyway, so converting deeper "
    "first gives the same result"
)
_ONE_TYPE = (
    "the order of types in a mixed list: the API's unordered lists hold one type each "
    "(codes and emails are strings, survey ids numbers, range sets objects), and both sides "
    "of a comparison are sorted by the same key"
)
_JSON_ONLY = "unreachable: bodies hold only dicts, lists and JSON scalars"
EQUIVALENT.update(
    {
        _NORMALISE + "x__normalise_field__mutmut_29": "for qlc itself the else branch gives "
        "its name, 'qlc', anyway",
        _NORMALISE + "x__normalise_field__mutmut_30": "as x__normalise_field__mutmut_29",
        _NORMALISE + "x__normalise_field__mutmut_39": _FAST_PATH,
        _NORMALISE + "x__normalise_mapping__mutmut_16": _FAST_PATH,
        _NORMALISE + "x__normalise_mapping__mutmut_17": _FAST_PATH,
        _NORMALISE + "x__normalise_mapping__mutmut_26": _FAST_PATH,
        _NORMALISE + "x__normalise_mapping__mutmut_42": _SAME_WAY,
        _NORMALISE + "x__normalise_mapping__mutmut_43": _SAME_WAY,
        _NORMALISE + "x__normalise_mapping__mutmut_39": "deep=None for False: both are false",
        _NORMALISE + "x__normalise_mapping__mutmut_14": "the top level of a body (no parent) "
        "holds no unmanaged field: UNMANAGED_FIELDS has no key '' as it has no key 'XXXX'",
        _NORMALISE + "x__normalise_value__mutmut_4": "no field of a survey or group body holds "
        "a list of lists (spec 2.2, 2.9)",
        _NORMALISE + "x__numbers__mutmut_14": "the list branch is reached only for names that "
        "are not numeric, and an item's conversion then depends on its own keys, not the name",
        _NORMALISE + "x__sort_key__mutmut_3": _ONE_TYPE,
        _NORMALISE + "x__sort_key__mutmut_4": _ONE_TYPE,
        _NORMALISE + "x__sort_key__mutmut_5": _ONE_TYPE,
        _NORMALISE + "x__sort_key__mutmut_6": _ONE_TYPE,
        _NORMALISE + "x__sort_key__mutmut_7": _ONE_TYPE,
        _NORMALISE + "x__sort_key__mutmut_8": _ONE_TYPE,
        _NORMALISE + "x__sorted_set__mutmut_4": _FAST_PATH,
        _NORMALISE + "x_json_copy__mutmut_1": _FAST_PATH,
        _NORMALISE + "x_json_copy__mutmut_4": _FAST_PATH,
        _NORMALISE + "x_json_copy__mutmut_10": _FAST_PATH,
        _NORMALISE + "x_json_copy__mutmut_15": _JSON_ONLY,
        _NORMALISE + "x_json_copy__mutmut_16": _JSON_ONLY,
        _NORMALISE + "x_json_copy__mutmut_17": _JSON_ONLY,
    }
)

_GENERATE = "surveyctl.manifests.generate."
_PROPORTIONAL = (
    "every weight is scaled by the same factor, and largest_remainder divides by their sum"
)
_SAME_SUM = "sum() of Fractions starting from 0 instead of Fraction(0) is the same number"
_ENTRY = (
    "a quota entry is `{generate: ...}` alone, so the entry's own location, which where() "
    "falls back to, is the location of its key"
)
_SAME_COUNT = "zip(strict=True) made lenient: there is one count per combination"
EQUIVALENT.update(
    {
        _GENERATE + "x__shares__mutmut_13": _SAME_SUM,
        _GENERATE + "x_largest_remainder__mutmut_5": _SAME_SUM,
        _GENERATE + "x__shares__mutmut_45": _PROPORTIONAL,
        _GENERATE + "x__shares__mutmut_25": "only how many names sums_off holds is read, not "
        "the names",
        _GENERATE + "x_expand__mutmut_106": _PROPORTIONAL,
        _GENERATE + "x_expand__mutmut_103": "math.prod starting from 1 instead of Fraction(1) "
        "is the same Fraction",
        _GENERATE + "x_expand__mutmut_115": _SAME_COUNT,
        _GENERATE + "x_expand__mutmut_118": _SAME_COUNT,
        _GENERATE + "x_expand__mutmut_119": _SAME_COUNT,
        _GENERATE + "x_expand__mutmut_5": _ENTRY,
        _GENERATE + "x_expand__mutmut_6": _ENTRY,
        _GENERATE + "x_expand__mutmut_7": _ENTRY,
        _GENERATE + "x_expand__mutmut_63": "every_dimension=None for False: both are false",
    }
)

_RULES = "surveyctl.manifests.rules."
_LIVE_URL_READ = (
    "the default of live_url is never used: the schema requires live_url, and a Survey that "
    "fails the schema is checked for it only when it is text"
)
_QUOTA_LINE = "a quota's location is always a Location, which has a line: '?' is never shown"
_QUALIFICATION_LINE = (
    "a qualification's location is always set (the line of its entry, or of its cell)"
)
_REF_LINE = (
    "every group's field_locations holds buyer_surveygroup_ref: a manifest's from its spec, "
    "where the schema requires it, a program's from its exclusion"
)
EQUIVALENT.update(
    {
        **{_RULES + f"x__live_url__mutmut_{n}": _LIVE_URL_READ for n in (3, 5, 8)},
        **{_RULES + f"x__unique_quota_ids__mutmut_{n}": _QUOTA_LINE for n in (34, 37, 40)},
        **{_RULES + f"x__targeting__mutmut_{n}": _QUALIFICATION_LINE for n in (24, 25)},
        _RULES + "x__targeting__mutmut_15": "an unresolved qualification always names its "
        "attribute (the schema asks for a code or a name of at least one character), so the "
        "text put in place of a missing name is never read",
        **{_RULES + f"x_check_groups__mutmut_{n}": _REF_LINE for n in (5, 7)},
    }
)

EQUIVALENT.update(
    {
        "surveyctl.safety.x_is_sandbox__mutmut_6": "a host of '' or 'XXXX' has no hostname "
        "either way",
        "surveyctl.safety.x_is_sandbox__mutmut_7": "'' and 'XXXX' are neither localhost nor an "
        "IP address",
        "surveyctl.safety.xǁInterruptsǁ__init____mutmut_3": "_finishing None for False: both "
        "are false",
        "surveyctl.safety.x_check_output_path__mutmut_45": "str(None) is used only when the "
        "error has no strerror, and the OSErrors of open and mkstemp always have one",
        "surveyctl.safety.xǁInterruptsǁ__init____mutmut_6": "received '' for None: both are "
        "false, so the first signal takes its place either way, and exit_code reads either as "
        "no signal (130); nothing else reads it",
        "surveyctl.safety.xǁOutputFileǁ__exit____mutmut_3": "exc_info[1] for exc_info[0]: a "
        "with statement passes the type and the value of an exception together, or neither",
        **{
            f"surveyctl.safety.xǁOutputFileǁ__init____mutmut_{number}": "newline=None (the "
            "default) for '': writing, it turns '\\n' into os.linesep, which is '\\n' on Linux "
            "and macOS; only on Windows, where no test runs, would the lines end in '\\r\\n'"
            for number in (4, 6)
        },
    }
)
_PROBE_NAME = (
    "the name of the probe file: it is created exclusively (it never touches another file) "
    "and removed before the check returns, so no check that runs to its end shows it; only a "
    "process killed between those two lines would leave it behind, under another name"
)
EQUIVALENT.update(
    {
        f"surveyctl.safety.x_check_output_path__mutmut_{number}": _PROBE_NAME
        for number in (31, 32, 34, 35, 36, 37, 38, 39)
    }
)

_TAMPER = "surveyctl.reconcile.tamper."
_SENTINEL = (
    "the text of the 'absent' sentinel: a lost create is in at least one of the two plans, "
    "whose value (an object or null, as the plan file's schema requires) differs from any text"
)
EQUIVALENT.update(
    {
        _TAMPER + "x_recheck__mutmut_32": _SENTINEL,
        _TAMPER + "x_recheck__mutmut_33": _SENTINEL,
        _TAMPER + "x_recheck__mutmut_40": _SENTINEL,
        _TAMPER + "x_recheck__mutmut_41": _SENTINEL,
        _TAMPER + "x_recheck__mutmut_109": "an unverified plan that got this far claims no "
        "unread resource the fresh plan can read, so the union is the fresh plan's own",
    }
)

_PLANNER = "surveyctl.reconcile.planner."
EQUIVALENT.update(
    {
        _PLANNER + "x__plan_removed__mutmut_5": "the removed resources sorted by address alone: "
        "'ExclusionGroup/' sorts before 'Survey/', the reverse of the kinds' order, as the key "
        "sorts them",
        _PLANNER + "x__plan_removed__mutmut_19": "read_all returns a result for every address "
        "it is given, so `result is not None` is always true here",
        _PLANNER + "x__make_plan__mutmut_13": "Rule(None) for Rule(environment) when the "
        "request names no rule: that is the title rule, and recovery reads a rule's environment "
        "only to stamp a body (identity.stamped), which the title rule never does; recovery's "
        "own default is Rule('')",
        _PLANNER + "x_make_plan__mutmut_9": "the reads' state given as None: _make_plan sets "
        "reads.state (the state after recovery) before it starts any read, and LiveReads's "
        "constructor only stores it",
    }
)

_READS = "surveyctl.reconcile.reads."
_NO_ERROR_ADDRESS = (
    "the address of a result without an error is never looked at: `LiveReads.results` is read "
    "only for the errors (plan.unread), and no kind's plan reads `result.address`"
)
_FROM_STATE = (
    "from_state only keeps a --refresh=false result out of plan.seen, which only apply records "
    "(and apply refuses --refresh=false; a saved plan drops seen)"
)
_DECIDED_BY_EXPECT = (
    "the record or manifest result hands _listed_unchanged is not looked at: the planner, "
    "result's one caller, hands expect every address first with the same record and manifest, "
    "and expect's answer for it is kept (self._unchanged), so result's question is answered "
    "from there"
)
_ASKED_TWICE = (
    "the answer of _listed_unchanged not kept (or kept as None, which reads as not kept): "
    "result then compares again what expect compared, the same record, listing and manifest, "
    "and finds the same; only the time of the second comparison is lost (docs/performance.md)"
)
EQUIVALENT.update(
    {
        _READS + "xǁ_FastSwitchingǁ__init____mutmut_4": "the first open() sets _found before "
        "any close() reads it",
        _READS + "xǁLiveReadsǁ__exit____mutmut_3": "shutdown() waits by default: wait=True "
        "left out is the same call",
        _READS + "xǁLiveReadsǁ_list_then_read__mutmut_14": "getattr without its default: only "
        "the survey kind has a listing (versions is None for the others), and every "
        "SurveyRecord has mod_on",
        _READS + "xǁLiveReadsǁresult__mutmut_7": _NO_ERROR_ADDRESS,
        # The address of an unchanged result: result__mutmut_30 until the listing's question
        # moved into _listed_unchanged (30 is now the fault below).
        _READS + "xǁLiveReadsǁresult__mutmut_23": _NO_ERROR_ADDRESS,
        _READS + "xǁLiveReadsǁresult__mutmut_30": "the record result hands _read is not "
        "looked at: result reads only what _listed_unchanged found changed, whose read expect "
        "(called first with the same record) or the listing's worker has sent already, so "
        "_read returns that read",
        _READS + "xǁLiveReadsǁresult__mutmut_16": _DECIDED_BY_EXPECT,
        _READS + "xǁLiveReadsǁresult__mutmut_17": _DECIDED_BY_EXPECT,
        _READS + "xǁLiveReadsǁ_listed_unchanged__mutmut_1": _ASKED_TWICE,
        _READS + "xǁLiveReadsǁ_listed_unchanged__mutmut_2": _ASKED_TWICE,
        _READS + "xǁLiveReadsǁ_listed_unchanged__mutmut_21": _ASKED_TWICE,
        _READS + "x_read_live__mutmut_3": "the first attempt's result is kept only when it has "
        "no error, and then its address is never looked at (as xǁLiveReadsǁresult__mutmut_7)",
        _READS + "xǁLiveReadsǁresult__mutmut_9": _FROM_STATE,
        _READS + "xǁLiveReadsǁresult__mutmut_12": _FROM_STATE,
        _READS + "xǁLiveReadsǁresult__mutmut_13": _FROM_STATE,
        # result__mutmut_18 until the listing's question moved into _listed_unchanged.
        _READS + "xǁLiveReadsǁ_listed_unchanged__mutmut_8": "unreachable: expect and result "
        "come after start() saw the same state, so a kind with a record there has a listing, "
        "or was skipped under --refresh=false, whose records all returned before asking",
    }
)

_IDENTITY = "surveyctl.reconcile.identity."
_ACCOUNT = "surveyctl.api.account_surveys."
_ADOPTION = "surveyctl.reconcile.adoption."
_SURVEY_TWINS = "surveyctl.reconcile.kinds.survey_twins."
_NEVER_AMBIGUOUS = (
    "a group twin is never ambiguous: one twin per group, and two manifests cannot share a "
    "buyer_surveygroup_ref (manifests/rules.py), so the ambiguous message is for surveys only"
)
_ONE_PER_ITEM = "zip(strict=True) made lenient: pool.map gives one result per item it maps"
_FALSY = "targeting=None for False: both are false (`if not targeting`)"
EQUIVALENT.update(
    {
        _ACCOUNT + "xǁListerǁlist_surveys__mutmut_1": "a Protocol's stub is never called",
        _IDENTITY + "x__stamp_of_no_manifest__mutmut_2": "unreachable: an external_project_id "
        "is a string or null (buyer-api.md; the service refuses a number with 1004), and null "
        "never reaches the check",
        _IDENTITY + "x__stamp_of_no_manifest__mutmut_9": "rpartition for partition: a stamp of "
        "a survey address has one '/' after the environment's; with more, the name (partition) "
        "or the kind (rpartition) holds a '/', and neither is valid",
        _ADOPTION + "x__twin_message__mutmut_8": "settle passes ambiguous=True for every "
        "address with several twins (Identity.ambiguous), so `len(twins) > 2 or ambiguous` "
        "is `ambiguous` as the original is",
        _ADOPTION + "x__twin_message__mutmut_19": _NEVER_AMBIGUOUS,
        _ADOPTION + "x__twin_message__mutmut_22": _NEVER_AMBIGUOUS,
        _ADOPTION + "x__renamed_message__mutmut_3": "every twin of Identity.renamed() has "
        "managed_as set, so `or ''` is never taken",
        _ACCOUNT + "x_account_surveys__mutmut_8": _FALSY,
        _ACCOUNT + "x_account_surveys__mutmut_15": _FALSY,
        _ACCOUNT + "x_account_surveys__mutmut_16": "page left out: get_surveys_page's page "
        "is 1 by default",
        _ACCOUNT + "x_account_surveys__mutmut_21": "the first pages are four tasks: any pool "
        "of four threads or more reads them all at once",
        _ACCOUNT + "x_account_surveys__mutmut_26": _ONE_PER_ITEM,
        _ACCOUNT + "x_account_surveys__mutmut_29": _ONE_PER_ITEM,
        _ACCOUNT + "x_account_surveys__mutmut_34": _ONE_PER_ITEM,
        _ACCOUNT + "x_account_surveys__mutmut_57": _ONE_PER_ITEM,
        _ACCOUNT + "x_account_surveys__mutmut_60": _ONE_PER_ITEM,
        _ACCOUNT + "x_account_surveys__mutmut_65": _ONE_PER_ITEM,
        _SURVEY_TWINS + "x_survey_twins__mutmut_1": "its default is never used: its one caller, "
        "the survey kind's find_twins, passes the plan's parallelism",
        **{
            _SURVEY_TWINS + f"x__renamed_programs__mutmut_{n}": "`was` is never None there: an "
            "address is in `former` only when member_of found it a program's member, so the "
            "reason always names its program, and the text for no program is never shown"
            for n in (69, 70)
        },
        _SURVEY_TWINS + "x_survey_twins__mutmut_10": "`=` for `+=`: find_twins asks the survey "
        "kind first (surveys before groups, adoption after), while requests is still 0",
    }
)

_LOST = "surveyctl.reconcile.lost."
_FROM_THE_JOURNAL = (
    "pop without its default: every lost create is an entry of the journal it is popped from "
    "(recover_lost_creates takes them from state.journal, recovery.state is its copy, and each "
    "is resolved once), so the key is always there"
)
EQUIVALENT.update(
    {
        _LOST + "x_adopt__mutmut_4": _FROM_THE_JOURNAL,
        _LOST + "x_plan_again__mutmut_27": _FROM_THE_JOURNAL,
        _LOST + "x_adopt__mutmut_2": "the adopted create's journal entry kept in the plan's "
        "state: the plan reads the journal only for resources without a record (blocked_create, "
        "the planner, creates_due), adopt has just recorded this one, and apply clears the entry "
        "from the stored state itself (record_recovered)",
        _LOST + "x_plan_again__mutmut_10": "`now <= settled_at` for `<`: the two differ only "
        "when the plan reads the clock at the very microsecond the create settles",
    }
)

# The file backend's lock (state/file/lock.py), its record (lock_record.py) and the checks of
# the holding process (surveyctl/processes.py): one module, state/lock.py, until it was split.
_LOCK = "surveyctl.state.file.lock."
_LOCK_RECORD = "surveyctl.state.file.lock_record."
_PROCESSES = "surveyctl.processes."
_UNDER_THE_GUARD = (
    "unlink without missing_ok: the file was just found under the guard, which every command "
    "that removes it holds, so it is still there"
)
_ASCII_RECORD = (
    "the record is ASCII (json.dumps escapes the rest), which every locale's encoding reads "
    "alike, and 'UTF-8' is the codec 'utf-8'"
)
_PROC_STAT = (
    "what is read of /proc/PID/stat (')' and the numbers after it) is ASCII, which every "
    "locale's encoding reads alike; errors='replace' keeps the name from failing either way"
)
_EVERY_JSON_KIND = (
    "the fallback of _json_kind (left out, None or another text) is never reached: its value "
    "comes from json.loads, which gives only null, true, false, objects, lists, strings and "
    "numbers, each named before it"
)
EQUIVALENT.update(
    {
        _LOCK + "x__remove_leftovers__mutmut_2": _UNDER_THE_GUARD,
        _LOCK + "x__remove_leftovers__mutmut_3": _UNDER_THE_GUARD,
        _LOCK + "xǁStateLockǁrelease__mutmut_8": _UNDER_THE_GUARD,
        _LOCK + "xǁStateLockǁrelease__mutmut_9": _UNDER_THE_GUARD,
        _LOCK_RECORD + "x_read_record__mutmut_2": _ASCII_RECORD,
        _LOCK_RECORD + "x_read_record__mutmut_4": _ASCII_RECORD,
        _LOCK_RECORD + "x_read_record__mutmut_8": "the error is not looked at: "
        "os_error_message names the file in the way first, and this branch is taken only when "
        "there is one",
        _PROCESSES + "x_boot_id__mutmut_1": "the boot ID is an ASCII UUID, which every locale's "
        "encoding reads alike",
        _PROCESSES + "x_boot_id__mutmut_6": "'ASCII' is the codec 'ascii'",
        # Named x_process_start_time__mutmut_2, _4 and _8 until one reader of /proc/PID/stat
        # (_stat_fields) served the start time and the zombie check; _2 and _4 of
        # process_start_time now name faults the tests kill, and it has no _8.
        _PROCESSES + "x__stat_fields__mutmut_2": _PROC_STAT,
        _PROCESSES + "x__stat_fields__mutmut_4": _PROC_STAT,
        _PROCESSES + "x__stat_fields__mutmut_8": "'ASCII' is the codec 'ascii'",
        _LOCK + "xǁStateLockǁacquire__mutmut_10": "waiting=None for False: both are false",
        # acquire__mutmut_37 until acquire passed $SURVEYCTL_ACTOR on (37 is now a fault the
        # tests kill).
        _LOCK + "xǁStateLockǁacquire__mutmut_40": "`>` for `>=`: Linux's monotonic clock (in "
        "nanoseconds) has passed the deadline by the time the record is read",
        _LOCK_RECORD + "x__json_kind__mutmut_14": _EVERY_JSON_KIND,
        _LOCK_RECORD + "x__json_kind__mutmut_16": _EVERY_JSON_KIND,
        _LOCK_RECORD + "x__json_kind__mutmut_17": _EVERY_JSON_KIND,
        _LOCK_RECORD + "x__json_kind__mutmut_18": _EVERY_JSON_KIND,
        _LOCK_RECORD + "x__json_kind__mutmut_19": _EVERY_JSON_KIND,
    }
)

_PLANFILE = "surveyctl.reconcile.planfile."
_SAME_CODEC = "'UTF-8' is the codec 'utf-8'"
_LAYOUT = (
    "the layout of the saved file (indentation, key order): it is read back by its keys, its "
    "checksum and signature are over the parsed plan, and `plan --out` finds the kind in the "
    "first 1024 bytes either way"
)
EQUIVALENT.update(
    {
        _PLANFILE + "x__check_signature__mutmut_13": _SAME_CODEC,
        _PLANFILE + "x__check_signature__mutmut_23": _SAME_CODEC,
        _PLANFILE + "x__sign__mutmut_23": _SAME_CODEC,
        _PLANFILE + "x__read__mutmut_32": _SAME_CODEC,
        _PLANFILE + "x__sign__mutmut_5": "ensure_ascii=None for False: both are false",
        _PLANFILE + "x__read__mutmut_13": "what a too-large file leaves in `raw` is never "
        "looked at: `too_large` alone refuses it",
        _PLANFILE + "x__read__mutmut_16": "one byte more read from a pipe before the refusal: "
        "len(raw) > MAX_PLAN_BYTES tells it either way",
        _PLANFILE + "x__load__mutmut_96": "the refusal of a plan that Plan.from_dict cannot "
        "build: unreached, as the schema requires every field the plan's classes need and "
        "_unknown_field refuses every other",
        **{
            f"{_PLANFILE}x_save_plan__mutmut_{number}": _LAYOUT
            for number in (33, 34, 36, 37, 38, 39)
        },
    }
)

_APPLY = "surveyctl.reconcile.apply."
EQUIVALENT.update(
    {
        _APPLY + "x_forget_gone__mutmut_6": "pop() without its default: every address of "
        "plan.gone is a record of the state the apply holds under its lock, and a saved plan "
        "whose resource was forgotten since is refused as unlike a fresh plan",
    }
)

_PLACEMENT = "surveyctl.state.placement."
_STORE_NAME = (
    "the file store's environment names it only in the lock's messages, and _file_holds "
    "only loads (the problems it notes name the file)"
)
_DSN_MESSAGES = (
    "Dsn.parse's environment and libpq defaults only fill what its messages say (describe, "
    "error), which _postgres_holds never shows; connect hands the string to libpq, which reads "
    "the PG variables itself"
)
_SQL_CASE = "SQL keywords in lower case: the same query"
_SERIAL_ZERO = (
    "differs only for a states row of serial 0, which no surveyctl write leaves (the first "
    "write of an environment inserts its row at serial 1)"
)
EQUIVALENT.update(
    {
        _PLACEMENT + "x__file_holds__mutmut_5": _STORE_NAME,
        _PLACEMENT + "x__file_holds__mutmut_7": _STORE_NAME,
        _PLACEMENT + "x_check_placement__mutmut_27": _STORE_NAME,
        _PLACEMENT + "x__file_holds__mutmut_9": "verify=None for False: both are false",
        _PLACEMENT + "x__postgres_holds__mutmut_6": _DSN_MESSAGES,
        _PLACEMENT + "x__postgres_holds__mutmut_8": _DSN_MESSAGES,
        _PLACEMENT + "x__postgres_holds__mutmut_12": _DSN_MESSAGES,
        _PLACEMENT + "x__postgres_holds__mutmut_13": "only the application_name of a connection "
        "that runs one SELECT (pg_stat_activity shows 'surveyctl None' for those milliseconds); "
        "nothing reads it",
        _PLACEMENT + "x__postgres_holds__mutmut_22": _SQL_CASE,
        _PLACEMENT + "x__postgres_holds__mutmut_25": _SQL_CASE,
        _PLACEMENT + "x__postgres_holds__mutmut_28": _SQL_CASE,
        _PLACEMENT + "x__postgres_holds__mutmut_38": _SERIAL_ZERO,
        _PLACEMENT + "x__postgres_holds__mutmut_39": _SERIAL_ZERO,
        _PLACEMENT + "x__postgres_holds__mutmut_40": _SERIAL_ZERO,
        _PLACEMENT + "x_load_placed__mutmut_1": "its default is never used: its one caller, "
        "CliContext.placed_state, passes verify",
    }
)

_TWINS = "surveyctl.reconcile.twins."
EQUIVALENT.update(
    {
        _TWINS + "x_find_twins__mutmut_2": "a pool of 11 threads for 10 where the default is "
        "used (state rebuild): its client's throttle (pool_size 10) lets 10 requests through at "
        "once, so none is sent sooner",
    }
)

_ADJUST = "surveyctl.cli.adjust."
_CHECKED_FIRST = (
    "the fallback for a record never read back: outcome_sentence's one caller, show_unresolved, "
    "settles the read-back as `checked` just before, so record.check is never empty there"
)
_HIDDEN_HEADER = (
    "the counters table is printed without its header, so its column names are never seen"
)
_TITLE_PADDING = (
    "rich pads a title justified 'left' with blanks to the table's width, and leaves one "
    "justified None (its 'default') or unknown unpadded: the same title at the left, without "
    "trailing blanks"
)
EQUIVALENT.update(
    {
        _ADJUST + "x__submit__mutmut_14": "can_ask=None makes confirm_write ask terminal(), "
        "sys.stdin.isatty() as _interactive is, which is false on this branch",
        _ADJUST + "x__submit__mutmut_18": "as x__submit__mutmut_14",
        **{f"{_ADJUST}x_outcome_sentence__mutmut_{n}": _CHECKED_FIRST for n in range(4, 12)},
        **{
            f"{_ADJUST}x_render_summary__mutmut_{n}": _HIDDEN_HEADER
            for n in (33, 34, 35, 36, 38, 40, 41)
        },
        _ADJUST + "x__submit__mutmut_154": "every OSError AnswerFile.write lets out comes from a "
        "system call (open, write, fsync, chmod, replace) and carries its strerror",
        _ADJUST + "x_render_summary__mutmut_67": _TITLE_PADDING,
        _ADJUST + "x_render_summary__mutmut_72": _TITLE_PADDING,
        _ADJUST + "x_render_summary__mutmut_73": _TITLE_PADDING,
    }
)

_JOURNAL = "surveyctl.ops.adjust_journal."
_LAST_BYTE = "one byte is left after seek(-1, SEEK_END), so any read of it reads that byte"
EQUIVALENT.update(
    {
        _JOURNAL + "xǁAdjustmentJournalǁ_append__mutmut_5": "ensure_ascii=None for False: both "
        "are false",
        _JOURNAL + "xǁAdjustmentJournalǁ_append__mutmut_26": "'UTF-8' is the codec 'utf-8'",
        _JOURNAL + "x_account_id__mutmut_7": "'UTF-8' is the codec 'utf-8'",
        _JOURNAL + "x__read_events__mutmut_7": "'UTF-8' is the codec 'utf-8'",
        _JOURNAL + "xǁAdjustmentJournalǁ_ends_with_newline__mutmut_13": _LAST_BYTE,
        _JOURNAL + "xǁAdjustmentJournalǁ_ends_with_newline__mutmut_14": _LAST_BYTE,
    }
)

_SECRETS = "surveyctl.api.secrets."
_PATTERN_MEMO = (
    "the pattern of a key is kept only to save compiling it again: made anew, it is the same"
)
_OPENING_MEMO = (
    "what is known of a key's spellings is kept only to save making it again: made anew, it is "
    "the same"
)
_WIDER_HEADS = (
    "the patterns of where a spelling may begin only pass places on to the exact check: one "
    "that passes more places (an empty cut, capitals, an X) finds the same open ends, slower"
)
_SAME_LENGTHS = "the characters and their patterns are always as many: zip's strict changes nothing"
_FEWER_FOREIGN = (
    "the characters no escaped spelling holds, found fewer (capitals of letters that must be "
    "small, an X, no pattern where nothing is left to escape): only more tails walked, the "
    "same answers"
)
_BYTE_ESCAPE_AT_256 = (
    "U+0100 also gets \\x100 and %100, which no encoder writes for it: more text redacted, "
    "never less, and only text that spells the key's other characters too"
)
_REDACTING = "surveyctl.redacting."
_READ_FURTHER = (
    "only how much of a long text is redacted before the cut: a window that grows faster, a "
    "larger margin, or one more round where the window is exactly as long as the text or its "
    "redaction exactly limit + margin, keeps the same first `limit` characters, and a text "
    "with no key remembered is cut alike with a margin of 16 or 0"
)
_PREFIX_FIRST = (
    "a character's forms in reverse order of their text rather than longest first: a form "
    "that begins another sorts before it, so reversed it still comes after it, as the "
    "pattern needs"
)
_TYPE_ERROR_TEXT = (
    "the text of the TypeError for bytes: click, which writes b'' to ask whether a stream "
    "takes bytes, catches it without reading it"
)
EQUIVALENT.update(
    {
        _SECRETS + "x__spellings__mutmut_12": "'UTF-8' is the codec 'utf-8'",
        _SECRETS + "x__escaped__mutmut_1": _PATTERN_MEMO,
        _SECRETS + "x__escaped__mutmut_2": _PATTERN_MEMO,
        _SECRETS + "x__escaped__mutmut_20": _PATTERN_MEMO,
        _SECRETS + "x__forms__mutmut_9": _BYTE_ESCAPE_AT_256,
        _SECRETS + "x__forms__mutmut_10": _BYTE_ESCAPE_AT_256,
        _SECRETS + "x__opening__mutmut_1": _OPENING_MEMO,
        _SECRETS + "x__opening__mutmut_2": _OPENING_MEMO,
        _SECRETS + "x__opening__mutmut_99": _OPENING_MEMO,
        # A tail with a character no escaped spelling holds is passed over without the walk
        # of `_begins_escaped`; a pattern that finds fewer such characters only walks more.
        **{_SECRETS + f"x__opening__mutmut_{n}": _FEWER_FOREIGN for n in (62, 72, 74, 80, 81)},
        **{_SECRETS + f"x__begins__mutmut_{n}": _SAME_LENGTHS for n in (5, 8, 9)},
        _SECRETS + "x__cut_rest__mutmut_9": (
            "the rest lowered for an escape whose letters may not be capitals: only `\\\\` is "
            "such an escape beginning with its character, and its cut rest is empty"
        ),
        _SECRETS + "x__begins_escaped__mutmut_15": (
            "the states tried are kept only so as not to try one twice: the answer is the same"
        ),
        _SECRETS + "x__begins_escaped__mutmut_27": (
            "a piece as long as the escape that the escape starts with is the escape, which the "
            "branch before takes"
        ),
        _SECRETS + "x__open_end__mutmut_9": (
            "two more characters looked at: an end longer than every spelling begins none, as "
            "the exact check that follows says"
        ),
        _SECRETS + "x__cut_forms__mutmut_5": _WIDER_HEADS,
        _SECRETS + "x__cut_forms__mutmut_10": _WIDER_HEADS,
        _SECRETS + "x__opening__mutmut_50": _WIDER_HEADS,
        **{_SECRETS + f"x_redact_clipped__mutmut_{n}": _READ_FURTHER for n in (4, 13, 19, 24, 29)},
        _REDACTING + "xǁRedactingWriterǁ_emit__mutmut_7": "getattr without its default: a stream "
        "that refuses the text and has no buffer fails either way (AttributeError for "
        "UnicodeEncodeError); the process's streams and the files surveyctl writes have one",
        **{
            _REDACTING + f"xǁRedactingWriterǁ_emit__mutmut_{n}": "the fallback for a stream "
            "whose encoding is None ('XXutf-8XX', or 'UTF-8', the codec 'utf-8'): the process's "
            "streams and the files surveyctl writes name theirs"
            for n in (17, 18)
        },
        _REDACTING + "xǁRedactingWriterǁ__init____mutmut_4": "'' for None: the decoder is read "
        "only behind `if self._decoder`, false for both, until `buffer` makes it",
        _REDACTING + "xǁRedactingWriterǁrelease__mutmut_12": "hold=None for False: both are false",
        _REDACTING + "xǁRedactingWriterǁ_pass_on__mutmut_8": "a writer left among those holding "
        "text when it holds none: release_all then writes nothing of it (it only flushes the "
        "stream, and passes over one that is closed)",
        _REDACTING + "xǁRedactingWriterǁ__getattr____mutmut_6": "the AttributeError of a "
        "writer being made or copied (no stream yet) is caught by whoever asked: copy's hasattr",
        _REDACTING + "x_holds_secret__mutmut_11": "ensure_ascii=None for False: both are false",
        **{_SECRETS + f"x_redact__mutmut_{n}": _SAME_LENGTHS for n in (15, 18, 19)},
        _SECRETS + "x__character__mutmut_1": "every character's longest form first, not only "
        "the last one's: a match takes the same text (only the last character's order decides "
        "which form it ends with), found slower",
        _SECRETS + "x__character__mutmut_6": _PREFIX_FIRST,
        _SECRETS + "x__character__mutmut_9": _PREFIX_FIRST,
        _REDACTING + "xǁRedactingWriterǁwrite__mutmut_2": _TYPE_ERROR_TEXT,
        _REDACTING + "xǁRedactingWriterǁwrite__mutmut_3": _TYPE_ERROR_TEXT,
        _SECRETS + "x__head__mutmut_7": _SAME_LENGTHS,
        _SECRETS + "x__head__mutmut_10": _SAME_LENGTHS,
        _SECRETS + "x__head__mutmut_11": _SAME_LENGTHS,
    }
)

_TRANSACTIONS = "surveyctl.cli.transactions."
_PIPED_NO_WRAP = (
    "piped, the console is PIPE_WIDTH wide and soft-wraps: no cell is wrapped either way"
)
EQUIVALENT.update(
    {
        _TRANSACTIONS + "x__code__mutmut_4": "'XXXX' is no number either: None, as for ''",
        _TRANSACTIONS + "x__check_quota_ids__mutmut_46": "a QLC survey has a quota (the "
        "service's 1014), so the list of its buyer_quota_ids is never empty",
        _TRANSACTIONS + "x__check_quota_ids__mutmut_47": "as x__check_quota_ids__mutmut_46",
        _TRANSACTIONS + "xǁTableWriterǁrows__mutmut_11": "rich's default overflow is 'ellipsis'",
        _TRANSACTIONS + "xǁTableWriterǁrows__mutmut_17": _PIPED_NO_WRAP,
        _TRANSACTIONS + "xǁTableWriterǁrows__mutmut_20": _PIPED_NO_WRAP,
        _TRANSACTIONS + "xǁTableWriterǁrows__mutmut_21": _PIPED_NO_WRAP,
    }
)

_ADJUST_FILE = "surveyctl.ops.adjust."
_BLANK_ROWS_SKIPPED = (
    "the rows of a one-column file that reach _id are not blank (read_upload skips blank "
    "rows), so _id never refuses one and never uses the file or the line"
)
EQUIVALENT.update(
    {
        _ADJUST_FILE + "x__from_csv__mutmut_34": _BLANK_ROWS_SKIPPED,
        _ADJUST_FILE + "x__from_csv__mutmut_35": _BLANK_ROWS_SKIPPED,
    }
)

_PGLOCK = "surveyctl.state.postgres.lock.xǁAdvisoryLockǁ"
_SQL_NAMES_CASE = (
    "SQL keywords, or names not quoted, in another case: PostgreSQL folds both, the same query"
)
_HOST_UNSHOWN = (
    "the host of a holder read from PostgreSQL is shown nowhere: its sentences name `who` "
    "(user@host), and only the file lock reads `host`"
)
_HELD = (
    "unreachable: the store asks this only between acquire and release, while the lock's "
    "connection and info are both set"
)
EQUIVALENT.update(
    {
        **{
            f"{_PGLOCK}{function}__mutmut_{number}": _SQL_NAMES_CASE
            for function, numbers in {
                "acquire": (20,),
                "check": (7,),
                "still_held_sql": (5, 8, 11),
                "holder": (12, 13, 15),
                "force_unlock": (21, 31),
                "_holding_backend": (7, 10, 13, 14),
                "release": (13, 21),
                "_record": (10, 11, 13, 16, 17, 19, 21, 23),
            }.items()
            for number in numbers
        },
        **{f"{_PGLOCK}holder__mutmut_{number}": _HOST_UNSHOWN for number in (22, 35, 40, 52)},
        _PGLOCK + "acquire__mutmut_1": "its default is never used: its one caller, "
        "PostgresStateStore.locked, passes the timeout",
        _PGLOCK + "acquire__mutmut_11": "waiting=None for False: both are false",
        _PGLOCK + "acquire__mutmut_29": "`>` for `>=`: Linux's monotonic clock (in nanoseconds) "
        "has passed the deadline by the time the answer of pg_try_advisory_lock is read",
        _PGLOCK + "_wait_for_holder__mutmut_12": "`>=` for `>`: the two differ only when the "
        "clock reads the deadline to the nanosecond",
        _PGLOCK + "_wait_until_free__mutmut_6": "as _wait_for_holder__mutmut_12",
        _PGLOCK + "check__mutmut_2": _HELD,
        _PGLOCK + "still_held_sql__mutmut_16": _HELD,
        _PGLOCK + "still_held_sql__mutmut_18": _HELD,
        _PGLOCK + "release__mutmut_3": "release is called once, after acquire set both the "
        "connection and info, so they are both set or (never) both not",
        _PGLOCK + "__init____mutmut_13": "the connection is read only after acquire set it",
        _PGLOCK + "__init____mutmut_14": "info is read only after acquire set it",
    }
)

_CACHE = "surveyctl.manifests.cache."
_FILE_TEXT = (
    "the text of a file is decoded UTF-8 (no lone surrogates), which encodes alike with any "
    "spelling of the codec or without surrogatepass"
)
_BOUNDARY = "a boundary no clock reading meets: a pack exactly 30 days (and 0 s) old"
EQUIVALENT.update(
    {
        **{f"{_CACHE}x__key__mutmut_{n}": _FILE_TEXT for n in (8, 10, 11, 12)},
        _CACHE + "x__private__mutmut_8": "the branch of a system without user ids (not POSIX)",
        _CACHE + "x__read_pack__mutmut_8": "reading it all or one byte past the bound, the size "
        "check refuses the same packs; only the memory spent on a pack past the bound differs",
        _CACHE + "x__read_pack__mutmut_10": "as x__read_pack__mutmut_8",
        _CACHE + "x__remove_unused__mutmut_4": _BOUNDARY,
        _CACHE + "x__remove_unused__mutmut_11": _BOUNDARY,
        _CACHE + "xǁPackǁ_entry__mutmut_9": "an entry read from the pack and used again in the "
        "same load is the same entry in the pack as read",
        _CACHE + "xǁPackǁload__mutmut_24": "only whether a problem was reported is read",
        _CACHE + "xǁParsedCacheǁpack__mutmut_8": "another separator between the paths parts "
        "them as well",
    }
)

_QUICK = "surveyctl.quickschema."
_MEMO = (
    "only a memo lost: the check (or jsonschema's validator) is made again for every value, "
    "and answers the same"
)
_REFUSED_LATER = (
    "a text, a bool or None against a value of another kind: the branches after it refuse "
    "the pair as well"
)
EQUIVALENT.update(
    {
        **{f"{_QUICK}x_first_error__mutmut_{n}": _MEMO for n in (5, 6, 7, 10)},
        **{f"{_QUICK}x__checker__mutmut_{n}": _MEMO for n in (1, 2, 3, 7)},
        _QUICK + "x__checker__mutmut_5": "the bound is 1,000 or 1,001 checks kept: a process "
        "checks against a few constant schemas, and either bound keeps memory bounded",
        _QUICK + "x__decided__mutmut_8": "a condition without a type: [None], like [], holds "
        "no 'integer'",
        _QUICK + "x__decided__mutmut_10": "as x__decided__mutmut_8",
        _QUICK + "x__decided__mutmut_15": "a single type's name holds the text 'integer' only "
        "when it is 'integer'",
        **{f"{_QUICK}x__same__mutmut_{n}": _REFUSED_LATER for n in (1, 5, 9)},
    }
)

_THROTTLE = "surveyctl.api.throttle.xǁThrottleǁ"
_SET_BEFORE_USE = "a first value never read: the first 429 that sets a pace sets it too"
_CLOCK_EXACTLY = (
    "a time exactly one window or round old, which a monotonic clock read as a float does not meet"
)
EQUIVALENT.update(
    {
        **{f"{_THROTTLE}__init____mutmut_{n}": _SET_BEFORE_USE for n in (10, 11, 17, 18)},
        _THROTTLE + "_granted__mutmut_3": _CLOCK_EXACTLY,
        _THROTTLE + "succeeded__mutmut_5": _CLOCK_EXACTLY,
        _THROTTLE + "refused__mutmut_3": _CLOCK_EXACTLY,
        _THROTTLE + "_granted__mutmut_5": "divided or multiplied by a window of 1 s, the same",
        _THROTTLE + "pace__mutmut_12": "a sleep of 0 s when the turn is now: no wait either way",
        _THROTTLE + "succeeded__mutmut_7": "at the most in flight already, the limit stays the "
        "most (min of it and more), and a waiter woken rechecks its place",
    }
)

_RETRY = "surveyctl.api.retry."
_COUNTED_BY_TOTAL = (
    "total=retries counts every retry, so the connect (or status) count, as large at first "
    "and counting fewer of them, never runs out first: left out or None, the same retries"
)
_RAISED_AS_IS = (
    "a status retry past the wait budget: urllib3 catches its MaxRetryError "
    "(raise_on_status=False) and returns the response as is, so the text of its reason is "
    "never read"
)
_POOL = (
    "the pool of a MaxRetryError is never read: requests reads its reason, surveyctl its "
    "reason and causes"
)
_RSTRIP = "rstrip of a set of characters: the text of a number holds no X"
EQUIVALENT.update(
    {
        **{f"{_RETRY}x_retry_policy__mutmut_{n}": _COUNTED_BY_TOTAL for n in (2, 19, 4, 21)},
        _RETRY + "x_retry_policy__mutmut_12": "raise_on_status=None for False: both are false",
        _RETRY + "x_retry_policy__mutmut_28": "respect_retry_after_header left out: True is "
        "urllib3's default",
        _RETRY + "x_seconds_text__mutmut_1": "`>` for `>=`: they differ only at exactly 10, "
        "where the other branch says '10 s' too ('10.0' stripped of its zero and point)",
        _RETRY + "x_seconds_text__mutmut_8": _RSTRIP,
        _RETRY + "x_seconds_text__mutmut_9": _RSTRIP,
        _RETRY + "xǁReportingRetryǁ__init____mutmut_1": "a default every caller overrides: "
        "retry_policy and new() pass attempts",
        _RETRY + "xǁReportingRetryǁ__init____mutmut_2": "*args dropped: every caller passes "
        "keywords (retry_policy, and urllib3's new(), which calls type(self)(**params))",
        _RETRY + "xǁReportingRetryǁincrement__mutmut_16": "*args dropped: urllib3 passes all but "
        "the method and the URL by keyword, so they are always empty",
        _RETRY + "xǁReportingRetryǁincrement__mutmut_17": "_pool and _stacktrace dropped: the "
        "pool only goes into a MaxRetryError (never read), the stack trace only into the "
        "traceback of an error re-raised as is, which surveyctl never shows",
        _RETRY + "xǁReportingRetryǁincrement__mutmut_10": "urllib3's increment reads the "
        "response only to count a status retry (never the count to run out first, see "
        "total), to note its status in the history (never read) and to word a MaxRetryError "
        "it catches (raise_on_status=False)",
        **{
            f"{_RETRY}xǁReportingRetryǁincrement__mutmut_{n}": _RAISED_AS_IS
            for n in (25, 26, 27, 29, 32, 33, 34, 35)
        },
        **{f"{_RETRY}xǁReportingRetryǁincrement__mutmut_{n}": _POOL for n in (36, 42, 43, 44)},
        _RETRY + "xǁReportingRetryǁincrement__mutmut_49": "urllib3 passes an error or a "
        "response to increment, never both, so `and` and `or` agree",
        _RETRY + "xǁReportingRetryǁincrement__mutmut_64": "urllib3 passes the request's URL to "
        "every increment, so `or ''` is never taken",
        _RETRY + "xǁWaitBudgetǁ__init____mutmut_4": "exhausted=None for False: both are false",
    }
)

_BODY = "surveyctl.api.body.x_read_body__mutmut_"
_CONSUMED = (
    "requests reads _content_consumed only in iter_content and iter_lines (which read the body "
    "again only while _content is unset), in close() and in pickling; nothing surveyctl does "
    "iterates, closes or pickles an answer read whole: .content, .text and .json() read _content"
)
EQUIVALENT.update(
    {
        _BODY + "25": _CLOCK_EXACTLY.replace("one window or round old", "at the deadline"),
        _BODY + "26": "ConnectionError(None) for ConnectionError(exc), raised from exc: "
        "failure_reason walks __cause__ as it walks args, so it finds the same reason, and "
        "nothing shows the error's own text",
        _BODY + "30": _CONSUMED,
        _BODY + "31": _CONSUMED,
    }
)

EQUIVALENT.update(
    {
        "surveyctl.reconcile.kinds.base.x_delete_gone__mutmut_1": "gone=None for False: both "
        "are false, and its two callers (the survey's and the group's delete) only ask `if`",
    }
)

_PROGRAMS = "surveyctl.manifests.programs."
_WALKED_AGAIN = (
    "the count of a container walked before is not found, so it is walked again: the same "
    "number, only slower (and the walk is bounded by the budget it counts against)"
)
_MARKED = (
    "every mapping of a read manifest is a MarkedDict (from the parser or the cache), so the "
    "error is at the variable's own key and the fallback place is never used"
)
_LENIENT = "lenient=None for False: both are false"
_UNREAD = "a member's Document.index is read by nothing (only a file's own documents' are)"
EQUIVALENT.update(
    {
        _PROGRAMS + "x__count__mutmut_3": _WALKED_AGAIN,
        _PROGRAMS + "x__count__mutmut_4": _WALKED_AGAIN,
        _PROGRAMS + "x__count__mutmut_5": _WALKED_AGAIN,
        _PROGRAMS + "x__count__mutmut_26": _WALKED_AGAIN,
        _PROGRAMS + "x__count__mutmut_27": _WALKED_AGAIN,
        _PROGRAMS + "x__variables__mutmut_3": "rpartition for partition: a market is "
        "language_COUNTRY (the schema's ^[a-z]{2}_[A-Z]{2}$), with one underscore",
        _PROGRAMS + "x__variables__mutmut_25": _MARKED,
        _PROGRAMS + "x__expand__mutmut_57": _MARKED,
        _PROGRAMS + "x__groups__mutmut_50": _MARKED,
        _PROGRAMS + "x__expand__mutmut_78": "substitute places each string by its own key; "
        "the place given for the spec itself, a mapping, is never used",
        _PROGRAMS + "x__expand__mutmut_79": _LENIENT,
        _PROGRAMS + "x__groups__mutmut_104": _LENIENT,
        _PROGRAMS + "x__groups__mutmut_122": _LENIENT,
        _PROGRAMS + "x__expand__mutmut_123": _UNREAD,
        _PROGRAMS + "x__expand__mutmut_126": _UNREAD,
        _PROGRAMS + "x__expand__mutmut_127": "finite=None passed as its default, None",
        _PROGRAMS + "x_as_member_finding__mutmut_8": "rstrip('XX.XX') for rstrip('.'): the "
        "field before the full stop is quoted ('field_time'), so no X is ever stripped",
        _PROGRAMS + "x__mark__mutmut_9": "`or 2` for `or 1`: a market's Location always has "
        "a column",
        _PROGRAMS + "x_expand__mutmut_32": "Program.location is read by nothing",
        _PROGRAMS + "x_expand__mutmut_37": "Program.location is read by nothing",
        _PROGRAMS + "x_expand__mutmut_43": "the budget is always given: its one caller, "
        "load_manifests, passes the file's",
    }
)

_GROUP = "surveyctl.reconcile.kinds.group."
_SURVEYS_NAMED = (
    "the branch only turns `surveys` into `surveys_in_group`: with `surveys_in_group` "
    "ignored alone the set is the same either way"
)
_NO_SURVEYS_FIELD = (
    "`surveys` left in the ignored fields beside `surveys_in_group`: no live body, merge or "
    "drift has a field `surveys`, and _keeping_live then drops the names as it empties them"
)
_GROUP_FIELDS_LIVE = (
    "unreachable: the service requires every field of a group in a PUT (1004 without "
    "exclusion_period), so a live group has each, and an ignored field is always in the merge"
)
EQUIVALENT.update(
    {
        _GROUP + "x__ignored_fields__mutmut_6": _SURVEYS_NAMED,
        _GROUP + "x__ignored_fields__mutmut_7": _SURVEYS_NAMED,
        _GROUP + "x__ignored_fields__mutmut_10": _NO_SURVEYS_FIELD,
        _GROUP + "x__ignored_fields__mutmut_11": _NO_SURVEYS_FIELD,
        _GROUP + "x__keeping_live__mutmut_6": "surveys=None for []: api_body reads it with "
        "`or []`, so the same PUT is sent",
        _GROUP + "x__keeping_live__mutmut_11": _GROUP_FIELDS_LIVE,
        _GROUP + "x__keeping_live__mutmut_12": _GROUP_FIELDS_LIVE,
        _GROUP + "x__keeping_live__mutmut_13": _GROUP_FIELDS_LIVE,
    }
)

_SURVEY = "surveyctl.reconcile.kinds.survey."
_RECORDED = (
    "unreachable: a quota-update is planned only for a survey the state records, and a saved "
    "plan applied once its record is gone is refused (a fresh plan would create it)"
)
EQUIVALENT.update(
    {
        _SURVEY + "x__record_quotas__mutmut_4": _RECORDED,
        _SURVEY + "x__record_quotas__mutmut_5": _RECORDED,
        _SURVEY + "x__record_quotas__mutmut_6": _RECORDED,
        _SURVEY + "x__record_quotas__mutmut_29": "mod_on kept instead of None: a quota PUT "
        "moves the survey's mod_on to a value not seen, so the list shows it changed and the "
        "next plan reads the survey either way",
    }
)

_UNREAD_NO_OP = (
    "a survey left unread (SurveyKind.unchanged) has the manifest's body as last applied in "
    "the state already, and record_settled records a no-op's last_applied only where the "
    "state holds another: nothing is written either way"
)
_NO_OP_FINGERPRINT = (
    "a no-op's fingerprint is compared with the fresh plan's only where their effects differ "
    "(tamper.disagreement), and then 'mod_on N' and None alike differ from a read survey's "
    "fingerprint, or alike equal an unread one's: the same refusal"
)
_HELD_BACK_NOTED = (
    "the kind (or the location) given to blocked_create as None: it is read only for the note "
    "blocked_create adds when no note names the address yet, and recovery, which runs before "
    "every plan, leaves each create of a group it does not settle with a note of its own "
    "(held back, not checked, another buyer's)"
)
_NO_OP_LOCATION = (
    "the location of a no-op is read by nothing: only a change gets the notes that carry it "
    "(after_plan's quota notes, the check of a body holding the API key)"
)
_PERIOD_ALWAYS = (
    "the live exclusion_period taken into the planned body of a manifest without one: every "
    "group manifest has one (the schema requires it, in an ExclusionGroup and in a program's "
    "exclusion; validate, plan and apply refuse one without it), so the branch is never taken, "
    "and a fault that takes it anyway copies the merge's value, which is the manifest's, or "
    "for an ignored exclusion_period the live one that _keeping_live puts there too"
)
EQUIVALENT.update(
    {
        **{_SURVEY + f"x__unchanged__mutmut_{n}": _UNREAD_NO_OP for n in (6, 15)},
        **{_SURVEY + f"x__unchanged__mutmut_{n}": _NO_OP_FINGERPRINT for n in (7, 16)},
        **{_SURVEY + f"x__unchanged__mutmut_{n}": _NO_OP_LOCATION for n in (9, 18, 25, 26, 27)},
        **{
            _SURVEY + f"{function}__mutmut_8": "`or True` for the survey's location: every "
            "survey has one (its manifest's document, or its program's), so the same branch"
            for function in ("x__update", "xǁSurveyKindǁplan")
        },
        **{
            _SURVEY + f"xǁSurveyKindǁplan__mutmut_{n}": "the kind (or the location) given to "
            "blocked_create as None: as for a group (GroupKind.plan's 18 and 23), recovery leaves "
            "each survey create it does not settle with a note of its own (held back before it "
            "settles, not checked, candidates to import), so blocked_create adds none"
            for n in (18, 23)
        },
        _SURVEY + "x__update__mutmut_66": "the manifest given to _drift as None: the shortcut "
        "is then never taken (but for a survey with nothing last applied, whose drift is none "
        "either way), and the shortcut gives what the general way gives, the drift of the group "
        "membership alone being the only one possible there; only the time of normalising the "
        "whole body last applied is lost",
        _SURVEY + "xǁSurveyKindǁplan__mutmut_87": "`result is None and result.error` for "
        "`or`: result is never None there, since the planner reads every address the state "
        "records, and a survey it does not record was planned as a create above",
        _SURVEY + "xǁSurveyKindǁplan__mutmut_86": "`result.error and result.body is None` for "
        "`or`: a read that failed has no body, and one that did not has one (the client "
        "refuses an answer that is no JSON object; gone and unchanged results returned before)",
        _SURVEY + "x__left_closed__mutmut_4": "a closed wave's last_applied is the state's own "
        "record.last_applied, which record_settled leaves as it is: nothing is written either "
        "way",
        _GROUP + "xǁGroupKindǁplan__mutmut_9": "`or True` for the group's location: every group "
        "has one (its manifest's document, or its program's exclusion), so the same branch",
        **{_GROUP + f"xǁGroupKindǁplan__mutmut_{n}": _HELD_BACK_NOTED for n in (18, 23)},
        _GROUP + "xǁGroupKindǁplan__mutmut_101": "unknown=None for [] when the surveys are "
        "ignored: _with_pending, its one reader, asks only `not unknown`, true for both",
        _GROUP + "xǁGroupKindǁplan__mutmut_105": "the body last applied given to the merge as "
        "None: the merge reads it only to drop a field the manifest no longer has, and every "
        "group manifest has all four fields of a group (exclusion_period is required by the "
        "schema, in an ExclusionGroup and in a program's exclusion; the other three always are)",
        **{_GROUP + f"xǁGroupKindǁplan__mutmut_{n}": _PERIOD_ALWAYS for n in range(131, 143)},
    }
)

_RECORDS = "surveyctl.state.records."
_ONE_KIND = (
    "a record under a Survey/ (ExclusionGroup/) address is always of that kind: the state "
    "file is read by each address's kind, and `state mv` refuses to change it"
)
_NO_DEFAULT = "prevent_destroy read with a default of None: bool(None) is False too"
EQUIVALENT.update(
    {
        _RECORDS + "x_fingerprint__mutmut_5": "ensure_ascii=None for False: both are false",
        _RECORDS + "x_fingerprint__mutmut_20": "'UTF-8' for 'utf-8': the same codec",
        _RECORDS + "x_unregister_record__mutmut_4": "pop without a default: the one caller, "
        "kinds.unregister, forgets only a kind registered before (a test's own)",
        _RECORDS + "xǁSurveyRecordǁfrom_json__mutmut_31": _NO_DEFAULT,
        _RECORDS + "xǁSurveyRecordǁfrom_json__mutmut_33": _NO_DEFAULT,
        _RECORDS + "xǁGroupRecordǁfrom_json__mutmut_29": _NO_DEFAULT,
        _RECORDS + "xǁGroupRecordǁfrom_json__mutmut_31": _NO_DEFAULT,
        _RECORDS + "xǁStateǁcopy__mutmut_10": "the copy's format_version left to its default: "
        "a State read has FORMAT_VERSION (any other is refused), as one made new has",
        _RECORDS + "xǁStateǁsurvey__mutmut_8": _ONE_KIND,
        _RECORDS + "xǁStateǁgroup__mutmut_8": _ONE_KIND,
    }
)

# mutmut says "interrupted by user" when pytest exits 2, which it does when a test's own
# SIGINT (tests/safety/test_interrupts.py) reaches a mutant that no longer handles it: the
# mutant made the tests fail. Nobody interrupts the batch runs of this script.
_KILLED = ("killed", "timeout", "check was interrupted by user")
_NOT_CHECKED = "not checked"

_RESULT = re.compile(r"^\s*(?P<name>\S+): (?P<status>.+)$")


def run(
    name: str,
    target: Target,
    show_survivors: bool,
    mode: str = "run",
    patterns: tuple[str, ...] = (),
) -> tuple[int, int, int]:
    """Mutates one module in a scratch copy; prints and returns (killed, counted, equivalent).
    `mode` "report" only reads the results of the last run again; "again" runs the last
    run's survivors again with the tests as they are now, "resume" the mutants it never tried,
    "only" the mutants whose names match one of `patterns`."""
    work = SCRATCH / name
    mutmut = [sys.executable, "-m", "mutmut"]
    started = time.monotonic()
    if mode == "run":
        _mutate(work, target, mutmut)
    elif mode in ("again", "resume"):
        _again(work, target, mutmut, _survivors if mode == "again" else _untried)
    elif mode == "only":
        _only(work, target, mutmut, patterns)
    return _score(work, target, mutmut, show_survivors, started)


def _mutate(work: Path, target: Target, mutmut: list[str], chosen: tuple[str, ...] = ()) -> None:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for entry in COPIED:
        source = REPOSITORY / entry
        if source.is_dir():
            shutil.copytree(source, work / entry, ignore=shutil.ignore_patterns("__pycache__"))
        elif source.exists():
            shutil.copy2(source, work / entry)
    (work / "pyproject.toml").write_text(_settings(target), encoding="utf-8")
    subprocess.run(
        [*mutmut, "run", "--max-children", "1", *chosen],
        cwd=work,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


def _only(work: Path, target: Target, mutmut: list[str], patterns: tuple[str, ...]) -> None:
    settings = work / "pyproject.toml"
    if not settings.is_file() or settings.read_text(encoding="utf-8") != _settings(target):
        # No mutant exists before mutmut made them, so mutmut matches the patterns itself; it
        # refuses patterns that match nothing, and the named equivalents are run too this once.
        _mutate(work, target, mutmut, patterns)
        return

    def matching(work: Path, mutmut: list[str]) -> list[str]:
        return sorted(
            m
            for m in _statuses(work, mutmut)
            if m not in EQUIVALENT and any(fnmatch.fnmatchcase(m, p) for p in patterns)
        )

    _again(work, target, mutmut, matching)


def _settings(target: Target) -> str:
    """The scratch copy's pyproject.toml: the project's, with mutmut's settings for `target`."""
    tests = [test for test in target.tests if (REPOSITORY / test).exists()]
    settings = (
        "\n[tool.mutmut]\n"
        'source_paths = ["surveyctl"]\n'
        f"only_mutate = {list(target.files)!r}\n"
        f"pytest_add_cli_args_test_selection = {tests!r}\n"
        'pytest_add_cli_args = ["-x", "-q", "-p", "no:cacheprovider"]\n'
        f"also_copy = {[entry for entry in COPIED if entry not in ('surveyctl', 'tests')]!r}\n"
        "use_git_change_detection = false\n"
    ).replace("'", '"')
    pyproject = (REPOSITORY / "pyproject.toml").read_text(encoding="utf-8")
    return pyproject + settings


def _again(
    work: Path, target: Target, mutmut: list[str], which: Callable[[Path, list[str]], list[str]]
) -> None:
    # Other settings (another list of tests) would make mutmut forget every result, and the
    # mutants not run again would count as not killed: only the same settings are run again.
    settings = work / "pyproject.toml"
    if not settings.is_file() or settings.read_text(encoding="utf-8") != _settings(target):
        sys.exit(f"{target.shown}: needs a last run with the same settings; run it whole")
    for entry in COPIED:
        source = REPOSITORY / entry
        if entry == "surveyctl" or not source.exists():
            continue  # the module's mutants are made from the code of the last run
        if source.is_dir():
            ignored = shutil.ignore_patterns("__pycache__")
            shutil.copytree(source, work / entry, ignore=ignored, dirs_exist_ok=True)
        else:
            shutil.copy2(source, work / entry)
    chosen = which(work, mutmut)
    if chosen:
        subprocess.run(
            [*mutmut, "run", "--max-children", "1", *chosen],
            cwd=work,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )


def _statuses(work: Path, mutmut: list[str]) -> dict[str, str]:
    """mutmut's status of each mutant of the last run in `work`."""
    listed = subprocess.run(
        [*mutmut, "results", "--all", "true"], cwd=work, capture_output=True, text=True, check=False
    ).stdout
    return {m["name"]: m["status"] for m in map(_RESULT.match, listed.splitlines()) if m}


def _survivors(work: Path, mutmut: list[str]) -> list[str]:
    statuses = _statuses(work, mutmut)
    tried = {m: s for m, s in statuses.items() if s != _NOT_CHECKED and m not in EQUIVALENT}
    return sorted(m for m, s in tried.items() if s not in _KILLED)


def _untried(work: Path, mutmut: list[str]) -> list[str]:
    statuses = _statuses(work, mutmut)
    return sorted(m for m, s in statuses.items() if s == _NOT_CHECKED and m not in EQUIVALENT)


def _score(
    work: Path, target: Target, mutmut: list[str], show_survivors: bool, started: float
) -> tuple[int, int, int]:
    statuses = _statuses(work, mutmut)
    equivalent = [mutant for mutant in statuses if mutant in EQUIVALENT]
    # A run stopped before its end (the machine is shared; a module can take hours) leaves
    # mutants never tried: they are neither killed nor survivors, and are counted apart.
    unchecked = [m for m, s in statuses.items() if m not in EQUIVALENT and s == _NOT_CHECKED]
    counted = {m: s for m, s in statuses.items() if m not in EQUIVALENT and s != _NOT_CHECKED}
    killed = sum(1 for status in counted.values() if status in _KILLED)
    survivors = sorted(m for m, s in counted.items() if s not in _KILLED)
    score = 100.0 * killed / len(counted) if counted else 0.0
    stopped = (
        f", {len(unchecked)} not tried (the run was stopped, or --only left them out)"
        if unchecked
        else ""
    )
    print(
        f"{target.shown}: {killed}/{len(counted)} killed ({score:.0f} %), "
        f"{len(equivalent)} equivalent left out{stopped}, {time.monotonic() - started:.0f} s",
        flush=True,
    )
    # mutmut numbers the faults of a function in order, so an edit of the module can give a
    # name in EQUIVALENT to another fault; one the tests kill shows the entry is out of date.
    for mutant in sorted(m for m in equivalent if statuses[m] in _KILLED):
        print(f"  named equivalent, but killed (EQUIVALENT is out of date): {mutant}")
    for mutant in survivors:
        print(f"  {counted[mutant]}: {mutant}")
        if show_survivors:
            shown = subprocess.run(
                [*mutmut, "show", mutant], cwd=work, capture_output=True, text=True, check=False
            )
            print("    " + shown.stdout.strip().replace("\n", "\n    "))
    return killed, len(counted), len(equivalent)


def main() -> None:
    # Started in the background by a shell without job control (`cmd &` in a script, nohup),
    # this process inherits SIGINT ignored, and so would mutmut and its test runs; then the
    # interrupt tests, which send SIGINT to themselves, fail on the original code and mutmut's
    # clean run stops before any mutant. Python's own handler is reset to the default by exec.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE", help=", ".join(TARGETS))
    parser.add_argument("--survivors", action="store_true", help="print each survivor's diff")
    parser.add_argument(
        "--report", action="store_true", help="only print the scores of the last run again"
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="run only the last run's survivors again, with the tests as they are now",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="run only the mutants a stopped run did not try, with the tests as they are now",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PATTERN",
        help="run only the mutants whose names match this glob (repeatable), even if tried",
    )
    arguments = parser.parse_args()
    chosen = arguments.modules or list(TARGETS)
    unknown = [name for name in chosen if name not in TARGETS]
    if unknown:
        parser.error(f"unknown module {unknown[0]!r}; one of {', '.join(TARGETS)}")
    total_killed = total_counted = 0
    for name in chosen:
        mode = (
            "report"
            if arguments.report
            else "again"
            if arguments.again
            else "resume"
            if arguments.resume
            else "only"
            if arguments.only
            else "run"
        )
        killed, counted, _ = run(
            name, TARGETS[name], arguments.survivors, mode, tuple(arguments.only)
        )
        total_killed += killed
        total_counted += counted
    if len(chosen) > 1 and total_counted:
        score = 100.0 * total_killed / total_counted
        print(f"all: {total_killed}/{total_counted} killed ({score:.0f} %)")


if __name__ == "__main__":
    main()
