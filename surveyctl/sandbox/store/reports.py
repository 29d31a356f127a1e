"""Read-only queries of the sandbox's store: the filtered survey list and fieldwork counts."""

from __future__ import annotations

import sqlite3
from statistics import median


class ReportQueries:
    """Store methods that read several rows at once for a list or a performance report."""

    def surveys_page(
        self,
        conn: sqlite3.Connection,
        buyer_id: int,
        statuses: list[int],
        created_from: str | None,
        created_before: str | None,
        page: int,
        limit: int,
    ) -> tuple[list, int]:
        """One page (from 1) of the buyer's surveys in one of `statuses`, created in
        [created_from, created_before) (ISO 8601 UTC bounds, None for open), oldest first,
        and how many match in all."""
        marks = ",".join("?" * len(statuses))
        where, args = f"buyer_id = ? AND status IN ({marks})", [buyer_id, *statuses]
        if created_from is not None:
            where += " AND created >= ?"
            args.append(created_from)
        if created_before is not None:
            where += " AND created < ?"
            args.append(created_before)
        total = conn.execute(f"SELECT COUNT(*) FROM surveys WHERE {where}", args).fetchone()[0]
        ids = conn.execute(
            f"SELECT survey_id FROM surveys WHERE {where} ORDER BY survey_id LIMIT ? OFFSET ?",
            [*args, limit, (page - 1) * limit],
        ).fetchall()
        surveys = [self.survey(row[0], conn) for row in ids]
        return [s for s in surveys if s is not None], total

    def status_counts(self, conn: sqlite3.Connection, survey_id: int) -> dict[int, int]:
        """How many of the survey's transactions are in each Respondent Status Code."""
        rows = conn.execute(
            "SELECT status, COUNT(*) FROM transactions WHERE survey_id = ? GROUP BY status",
            (survey_id,),
        )
        return {status: count for status, count in rows}

    def median_complete_loi(self, conn: sqlite3.Connection, survey_id: int) -> float | None:
        """The median Respondent LOI (minutes) of the survey's completes, or None."""
        rows = conn.execute(
            "SELECT json_extract(record, '$.\"Respondent LOI\"') FROM transactions "
            "WHERE survey_id = ? AND status = 21",
            (survey_id,),
        ).fetchall()
        lois = [row[0] for row in rows if isinstance(row[0], int | float)]
        return float(median(lois)) if lois else None
