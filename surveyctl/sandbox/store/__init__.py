"""The sandbox's SQLite store: buyers, surveys, quotas, exclusion groups, transactions.

`Store` (in `database`) opens one SQLite file, safe to share between threads and processes.
Its records are named `Stored...` so that they are never mistaken for the records of
surveyctl's own state (`surveyctl.state.records`).

Functions other sandbox modules call (the respondent-traffic routes among them):

- `survey(survey_id) -> StoredSurvey | None`: the stored body (quotas left out), status, buyer,
  completes, has-been-live flag, the quotas (`StoredQuota`: completes, current_target, `open`)
  and the refs of the exclusion groups the survey belongs to.
- `survey_groups(survey_id) -> list[StoredGroup]`: those exclusion groups, with their members.
- `record_complete(survey_id, buyer_quota_ids)`: counts one complete in the survey and in each
  named quota (KeyError for a quota the survey does not have), stamps the last complete date,
  then applies the auto-pause rule (a live survey whose goal or every quota is achieved moves
  to paused). Returns the survey's status afterwards.
- `insert_transaction(survey_id, record)`: stores a full transaction record (spec 2.10; missing
  keys get defaults, see `transactions.complete_record`); `insert_transactions(survey_id,
  records)` stores many in one write.
- `buyer_secret(buyer_id)`: the shared secret of the return link's hash.
"""

from surveyctl.sandbox.store.database import Store
from surveyctl.sandbox.store.groups import StoredGroup
from surveyctl.sandbox.store.quotas import current_target
from surveyctl.sandbox.store.surveys import StoredQuota, StoredSurvey
from surveyctl.sandbox.store.transactions import now_iso

__all__ = ["Store", "StoredGroup", "StoredQuota", "StoredSurvey", "current_target", "now_iso"]
