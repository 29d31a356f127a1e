"""A 403 of a transaction read: spec 5.2 and 7 give these two calls 403, not 401, for an
access-token the service does not accept, so the client's sentence names the key as well as
the survey; a 403 that says the survey is another buyer's (code 1020) names only that."""

from __future__ import annotations

import pytest

from surveyctl.api import ApiClient
from surveyctl.errors import ApiError

KEY_HINT = "check the survey id and the key the environment's api_key_env names"
READS = {
    "list": lambda client, survey_id: client.get_transactions_page(survey_id),
    "one": lambda client, survey_id: client.get_transaction(survey_id, "tx-anything"),
}


@pytest.mark.parametrize("read", READS)
def test_a_transaction_read_refusing_the_key_with_403_names_the_key(sandbox, new_survey, read):
    survey_id = new_survey()
    with ApiClient(sandbox.url, "not-a-key", retries=0) as stranger:
        with pytest.raises(ApiError) as refused:
            READS[read](stranger, survey_id)
    assert refused.value.status == 403
    assert str(refused.value).endswith(KEY_HINT)


@pytest.mark.parametrize("read", READS)
def test_a_transaction_read_of_another_buyers_survey_says_only_that(
    other_buyer_api, new_survey, read
):
    with pytest.raises(ApiError) as refused:
        READS[read](other_buyer_api, new_survey())
    assert (refused.value.status, refused.value.code) == (403, 1020)
    assert str(refused.value).endswith("You don't have permission for this survey")
