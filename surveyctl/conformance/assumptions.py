"""The assumptions a conformance run checks, in the order it checks them, each with its source
as docs/api-assumptions.md gives it; and those it leaves alone, with the reason.

`BEFORE_DRAFT` needs no survey; `ON_DRAFT` runs on the run's own draft, in order (the error
probes last, as a PUT the service takes unexpectedly changes the draft).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from surveyctl.conformance import reads, writes
from surveyctl.conformance.probe import Outcome, Probe


@dataclass(frozen=True)
class Assumption:
    """One assumption of surveyctl about the service, and the check that tests it."""

    id: str
    text: str
    source: str
    check: Callable[[Probe], Outcome]


A = Assumption

BEFORE_DRAFT: tuple[Assumption, ...] = (
    A(
        "catalogue-pages",
        "GET /attributes?localization=L answers a list and a total_pages header",
        "spec 4.6",
        reads.catalogue_pages,
    ),
    A(
        "catalogue-gender",
        "gender 211 answers 111 male and 112 female",
        "public facts",
        reads.catalogue_gender,
    ),
    A(
        "catalogue-every-class",
        "the catalogue read without class holds the attributes of every class",
        "public facts",
        reads.catalogue_every_class,
    ),
    A("catalogue-en_AU", "the catalogue serves en_AU", "public facts", reads.catalogue_en_au),
    A(
        "invalid-key-401",
        "an invalid access-token answers 401 with a message the client reads "
        "(ps_api_response_message, msg, message, ...)",
        "spec 5, public facts",
        writes.invalid_key,
    ),
    A(
        "unknown-survey-404",
        "an unknown survey answers 404 with code 1006",
        "public facts",
        writes.unknown_survey,
    ),
    A(
        "unknown-group-404",
        "a group reference no group has answers 404 (how surveyctl knows a reference is free "
        "before a create, and that a create whose answer was lost made nothing)",
        "spec 4.9, our decision",
        reads.unknown_group,
    ),
    A(
        "text-check-unknown",
        "the open-ended check answers a transaction that does not exist with 400 and a "
        "message ('Invalid transaction')",
        "spec 7, public facts",
        writes.text_check_unknown_transaction,
    ),
)

ON_DRAFT: tuple[Assumption, ...] = (
    A(
        "create-required",
        "a create with only the required fields answers 201 with ps_survey_id",
        "public facts",
        writes.create_required_only,
    ),
    A(
        "create-draft",
        "a new survey is a draft (ps_survey_status 11)",
        "public facts",
        writes.create_is_draft,
    ),
    A(
        "create-defaults",
        "the create answer has billing_id PS+id, offer_price and test_url null "
        "when not sent, qlc off",
        "public facts",
        writes.create_defaults,
    ),
    A(
        "get-like-create",
        "GET /surveys/{id} answers the same body as the create",
        "public facts",
        reads.get_like_create,
    ),
    A(
        "get-mod_on",
        "a survey body carries mod_on and crtd_on (epoch ms)",
        "public facts",
        reads.get_carries_mod_on,
    ),
    A(
        "list-status",
        "GET /surveys?status=11 lists drafts, status=22 does not",
        "public facts",
        reads.list_by_status,
    ),
    A(
        "list-total-pages",
        "the survey list answers a total_pages header",
        "our decision",
        reads.list_total_pages,
    ),
    A(
        "list-mod_on",
        "the survey list's items carry mod_on (a plan skips unchanged surveys)",
        "public facts",
        reads.list_carries_mod_on,
    ),
    A(
        "list-identity",
        "the survey list's items carry survey_title, survey_localization, "
        "external_project_id, ps_survey_status and project_creation_date as GET shows them "
        "(how surveyctl recognises a survey: twins before a create, a lost create's answer)",
        "public facts, our decision",
        reads.list_carries_identity,
    ),
    A(
        "put-overwrites",
        "a PUT overwrites: fields it leaves out (buyer_message, external_project_id) are cleared",
        "spec 2.2, public facts",
        writes.put_overwrites,
    ),
    A(
        "put-get-body",
        "a PUT of the GET body sent back whole (response-only fields, "
        "external_project_id) answers 200",
        "public facts",
        writes.put_get_body_back,
    ),
    A(
        "put-unknown-field",
        "a field the spec does not list is accepted and ignored",
        "public facts",
        writes.put_unknown_field,
    ),
    A(
        "state-unpadded",
        'US state codes (225) unpadded ("6") are taken',
        "public facts",
        writes.state_codes_unpadded,
    ),
    A(
        "state-padded",
        'US state codes (225) zero-padded ("06") are taken',
        "public facts",
        writes.state_codes_padded,
    ),
    A(
        "feasibility-criterias",
        "feasibility_exclusions takes criterias beside criteriaSurveys and statuses",
        "public facts",
        writes.feasibility_criterias,
    ),
    A(
        "patch",
        "PATCH /surveys/{id} with a JSON Patch list answers 200 with the survey",
        "public facts",
        writes.patch_replace,
    ),
    A(
        "mod_on-moves",
        "mod_on changes on a write, crtd_on stays",
        "public facts",
        writes.mod_on_moves,
    ),
    A(
        "quota-put",
        "PUT .../quotas/{buyer_quota_id} answers buyer_quota_id, ps_quota_id, "
        "required_count, criteria",
        "spec 4.3, public facts",
        writes.quota_put,
    ),
    A(
        "quota-ids-kept",
        "a full PUT and a quota PUT keep each quota's ps_quota_id (by buyer_quota_id)",
        "spec 2.4, sandbox decision",
        writes.quota_ids_kept,
    ),
    A(
        "quota-put-id",
        "a quota PUT body may repeat buyer_quota_id",
        "public facts",
        writes.quota_put_repeats_id,
    ),
    A(
        "quota-put-title",
        "a quota PUT renames the quota (quota_title)",
        "public facts",
        writes.quota_put_title,
    ),
    A(
        "quota-performance",
        "GET .../quotas/performance lists ps_quota_id, buyer_quota_id, "
        "completes_goal, completes_fielded",
        "public facts",
        reads.quota_performance,
    ),
    A("quota-list", "GET /surveys/{id}/quotas lists the quotas", "public facts", reads.quota_list),
    A(
        "quota-one",
        "GET /surveys/{id}/quotas/{buyer_quota_id} answers the quota",
        "public facts",
        reads.one_quota,
    ),
    A(
        "transactions-page",
        "GET /surveys/{id}/transactions (v3) with status=17,18,19,21 and limit=500 answers a "
        "list (surveyctl reads transactions in pages of 500)",
        "spec 4.4, 8, our decision",
        reads.transactions_page,
    ),
    A(
        "survey-status",
        "GET /surveys/{id}/status answers the status",
        "public facts",
        reads.survey_status,
    ),
    A(
        "survey-performance",
        "GET /surveys/{id}/performance answers the survey's figures",
        "public facts",
        reads.survey_performance,
    ),
    A(
        "unknown-locale",
        "a locale the catalogue lacks is refused with 400",
        "sandbox decision (code 1018)",
        writes.unknown_locale,
    ),
    A(
        "qlc-needs-quotas",
        "QLC on without quotas is refused: 400, code 1014",
        "spec 7",
        writes.qlc_needs_quotas,
    ),
    A(
        "qbp-needs-quotas",
        "QBP on without quotas is refused: 400, code 1007",
        "public facts",
        writes.qbp_needs_quotas,
    ),
)
# Checked by the run itself when it removes the draft (`run.remove`).
REMOVED = (
    "delete",
    "DELETE /surveys/{id} removes a draft: 404 afterwards, in no status's list",
    "sandbox decision",
)

# Assumptions no run checks: each would launch the survey, move money, or need respondents.
# (The open-ended check of a transaction that does not exist needs none: `text-check-unknown`.)
NOT_CHECKED: tuple[tuple[str, str, str, str], ...] = (
    (
        "status-moves",
        "status moves 11->22->33->44 and the refusals of others",
        "public facts, sandbox decision",
        "would launch the draft (traffic, spend)",
    ),
    (
        "transactions",
        "transaction records, paging past one page and the status call",
        "spec 4.4-4.5, public facts",
        "needs respondents on a live survey (the draft's empty list: `transactions-page`)",
    ),
    ("adjustments", "adjustments answer 202 with status 1 Pending", "public facts", "moves money"),
    (
        "return-link",
        "the return link's ps_hash (SHA-1 of URL + secret)",
        "public facts",
        "needs a respondent and the buyer's secret",
    ),
    (
        "rate-limit",
        "429 with Retry-After past the account's rate",
        "sandbox decision",
        "would have to exceed the account's limit",
    ),
    ("qbp-live", "QBP changes refused outside draft (1007)", "public facts", "needs a live survey"),
    (
        "after-live",
        "QLC frozen once live (1017), writes to a closed survey refused (1010), the auto-pause",
        "spec 1.5, 2.7, 3, sandbox decision",
        "needs a survey that has been live",
    ),
    (
        "text-check",
        "the open-ended check takes 20 answers a call (422 past them)",
        "spec 4.7, 8",
        "needs a respondent's transaction: with one that does not exist, the spec does not "
        "say whether 21 answers are refused for their number (422) or the transaction (400)",
    ),
    (
        "other-buyer-403",
        "another buyer's survey answers 403 with code 1020",
        "public facts",
        "needs a second account's survey",
    ),
    (
        "groups",
        "exclusion group create, PUT, GET, DELETE",
        "spec 4.8-4.9, sandbox decision",
        "a group reference is unique across the service; not made by this check (the GET of "
        "one that does not exist: `unknown-group-404`)",
    ),
)
