"""The API's field lists (spec 2.2, 2.4, 2.5, 2.9): which fields an update carries, which the
service answers with and never takes back, and which surveyctl leaves alone.

Facts of the API, shared by the manifest check (a response-only field in a manifest is named
as such), the planner (what is compared and sent) and their tests; kept here so that neither
imports the other for them.
"""

from __future__ import annotations

# Spec 2.2, in the spec's order: the only fields an update body may carry.
UPDATE_FIELDS: tuple[str, ...] = (
    "survey_title",
    "survey_category_code",
    "survey_localization",
    "completes_required",
    "offer_price",
    "survey_pause_threshold",
    "schedule_pause",
    "incl_excl",
    "quota_throttling",
    "click_balancing",
    "expected_ir",
    "expected_loi",
    "live_url",
    "test_url",
    "feasibility_exclusions",
    "subscriber_emails",
    "field_time",
    "global_flexibility",
    "buyer_message",
    "billing_id",
    "mc_unique_id",
    "qualifications",
    "qbp",
    "qlc",
    "quotas",
    "is_feot_enabled",
    "feot",
    "is_dq_enable",
    "blend_id",
    "buyer_surveygroup_ref",
    "buyer_surveygroup_refs",
    "template_id",
    "external_project_id",
)

# Spec 2.5 fields that an update does not accept: the service's own bookkeeping.
RESPONSE_ONLY_FIELDS: frozenset[str] = frozenset(
    {
        "ps_survey_id",
        "ps_survey_status",
        "estimated_clicks",
        "survey_external_id",
        "soft_launch",
        "unique_links",
        "uniqueLinks",
        "url_transform",
        "is_modular_survey",
        "test_ps_survey_entry_link",
        "survey_grouping",
        "schedule_launch",
        "price_reco",
        "project_creation_date",
        "project_last_complete_date",
        "mc_count",
        "tc_count",
        "basic_token",
        "is_core_price_rate_card_enable",
        "dq_settings",
        "product",
        "pds_ignore_override",
        "supplier_allocation_throttle",
        "blend_applied",
        "mcqb",
        "crtd_on",  # public facts: epoch milliseconds of the creation and the last change
        "mod_on",
    }
)

# Spec 2.4: what a quota inside an update body may carry; ps_quota_id is the service's.
QUOTA_UPDATE_FIELDS: tuple[str, ...] = (
    "buyer_quota_id",
    "buyer_quota_supplier_id",
    "quota_title",
    "required_count",
    "criteria",
    "group_key",
)
QUOTA_RESPONSE_ONLY_FIELDS: frozenset[str] = frozenset({"ps_quota_id"})

# Spec 2.9: the fields of an exclusion group.
GROUP_FIELDS: tuple[str, ...] = (
    "buyer_surveygroup_ref",
    "name",
    "surveys_in_group",
    "exclusion_period",
)

# Fields the service takes that surveyctl neither compares nor sends, by the object holding
# them: the API schemas mark them `x-lenient`, and a sandbox served strict refuses them.
UNMANAGED_FIELDS: dict[str, frozenset[str]] = {"feasibility_exclusions": frozenset({"criterias"})}

# Ids that cannot be one segment of a URL path (a quota's buyer_quota_id, a group's reference,
# a transaction id): HTTP clients and servers resolve `.` and `..` as folders, so
# `/surveys/5/quotas/..` is sent as `/surveys/5/`.
UNADDRESSABLE: tuple[str, ...] = ("", ".", "..")
# A buyer_quota_id its own path could not name: `/surveys/{id}/quotas/performance` is the
# quota performance call (public facts), so a quota of that id could never be updated alone.
RESERVED_QUOTA_IDS: tuple[str, ...] = ("performance",)


def transaction_fields() -> tuple[str, ...]:
    """The keys of a transaction record (spec 2.10) in the spec's order, as the contract in
    `schemas/` lists them, and `Parent ID`, which items of a survey's transaction list carry:
    the columns of a csv or tsv export that has no record to take them from."""
    from surveyctl.schemafiles import load_schema  # only an empty export needs it

    fields = load_schema("api/common.json")["$defs"]["transaction_fields"]["properties"]
    return (*fields, "Parent ID")


def priced_individually(body: dict) -> list[str] | None:
    """The buyer_quota_ids a survey body prices individually with quota based pricing (spec
    2.6), at prices the API does not show (rule 5); None when QBP is not enabled."""
    qbp = body.get("qbp")
    if not isinstance(qbp, dict) or qbp.get("enable") is not True:
        return None
    return [str(quota_id) for quota_id in qbp.get("quota_ids") or []]
