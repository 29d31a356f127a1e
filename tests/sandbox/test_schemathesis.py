"""Schemathesis against the served sandbox: every operation of the OpenAPI description, with a
bounded number of generated requests each (valid and invalid ones), answers no 5xx and nothing
that breaks the description (status codes, content types, headers, bodies, 405 with Allow).

A share of the valid requests is pointed at resources that exist (a draft survey, a live one
with respondents in it, its quotas, an exclusion group), so the generated bodies reach the rules
behind the schemas and not only the 404 of an unknown id. The session's sandbox checks every
response against its schema as well (a violation there would be a 500).
"""

from __future__ import annotations

import itertools

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks
from schemathesis.core.parameters import ParameterLocation

from surveyctl.sandbox.openapi import openapi_document

from .conftest import BUYER_1, survey_body

MAX_EXAMPLES = 25
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
    checks.negative_data_rejection,
    checks.unsupported_method,
    checks.missing_required_header,
    checks.ignored_auth,
]

schema = schemathesis.openapi.from_dict(openapi_document())
schema.config.generation.update(max_examples=MAX_EXAMPLES)


class Pool:
    """Resources of buyer 1 that generated requests are pointed at, one request in two."""

    def __init__(self, raw, live_survey, held_sessions, fresh_ref):
        self.draft = raw.create()["ps_survey_id"]
        self.live = live_survey()
        self.transactions = held_sessions(self.live, 4)
        self.ref = fresh_ref()
        group = {"buyer_surveygroup_ref": self.ref, "name": "Fuzzed", "exclusion_period": 7,
                 "surveys_in_group": [self.draft]}  # fmt: skip
        assert raw.v2("POST", "/surveygroups", json=group).status_code == 201
        self._turn = itertools.count()

    def aim(self, case) -> None:
        """Points the path ids of a valid request at existing resources, every other time."""
        meta = getattr(case, "meta", None)
        if meta is None or not meta.generation.mode.is_positive or next(self._turn) % 2:
            return
        params = case.path_parameters or {}
        turn = next(self._turn)
        choices = {
            "survey_id": (self.live, self.draft),
            "buyer_quota_id": ("male", "female"),
            "transaction_id": tuple(self.transactions),
            "ref": (self.ref,),
        }
        for name, values in choices.items():
            if name in params and values:
                params[name] = values[turn % len(values)]


@pytest.fixture
def pool(raw, live_survey, held_sessions, fresh_ref) -> Pool:
    return Pool(raw, live_survey, held_sessions, fresh_ref)


def test_the_pool_body_is_a_valid_create_body(raw):
    assert raw.v2("POST", "/surveys", json=survey_body()).status_code == 201


@schema.parametrize()
@settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_described_and_never_5xx(case, sandbox, pool):
    pool.aim(case)
    case.call_and_validate(base_url=sandbox.url, headers=_token(case), checks=CHECKS)


def _token(case) -> dict[str, str]:
    """Buyer 1's token, except where the generated request leaves its headers out on purpose."""
    meta = getattr(case, "meta", None)
    header = meta.components.get(ParameterLocation.HEADER) if meta else None
    if header is not None and header.mode.is_negative:
        return {}
    return {"access-token": BUYER_1}
