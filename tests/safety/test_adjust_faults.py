"""An adjustment refused by the service (503, or 429 with Retry-After) is sent again and made
once: the sandbox refuses a share of requests before they touch any data (`--fail-rate`)."""

from __future__ import annotations

import json

import pytest

from surveyctl.sandbox.server import SandboxOptions, start

from .conftest import adjustment_count, configure


# Seeds whose first draw refuses the adjustment's first attempt (1: 503, 7: 429) and whose
# second lets the retry through.
@pytest.mark.parametrize("seed", [1, 7])
def test_a_refused_adjustment_is_retried_and_made_exactly_once(
    seed, sandbox, completes, project, run_cli
):
    survey_id, ids = completes
    faulty = start(
        SandboxOptions(
            db_path=sandbox.server.options.db_path,
            fail_rate=0.5,
            seed=seed,
            retry_after=0,
            keys=dict(sandbox.accounts.keys),  # the buyers this test acts for (own_accounts)
        )
    )
    before = adjustment_count(sandbox)
    try:
        configure(project, faulty.url)
        result = run_cli("adjust", "ids.csv", "--yes", "--output", "answer.json")
    finally:
        faulty.stop()
    summary = json.loads((project / "answer.json").read_text())["summary"]
    assert result.exit_code == 0, result.output
    assert "retrying POST /adjustments" in result.stderr
    assert adjustment_count(sandbox) == before + 1
    assert (summary["eligible"], summary["alreadyReconciled"]) == (3, 0)
