"""Exclusion groups in the sandbox's store: the groups and which surveys belong to them."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field


@dataclass
class StoredGroup:
    """A stored exclusion group and the ids of its surveys, in the order they joined."""

    ref: str
    buyer_id: int
    name: str
    exclusion_period: int
    surveys: list[int] = field(default_factory=list)


class GroupTables:
    """Store methods over the `survey_groups` and `group_members` tables."""

    def group(self, ref: str, conn: sqlite3.Connection | None = None) -> StoredGroup | None:
        if conn is None:
            with self.read() as own:
                return self._group(own, ref)
        return self._group(conn, ref)

    def _group(self, conn: sqlite3.Connection, ref: str) -> StoredGroup | None:
        row = conn.execute(
            "SELECT ref, buyer_id, name, exclusion_period FROM survey_groups WHERE ref = ?",
            (ref,),
        ).fetchone()
        if row is None:
            return None
        members = conn.execute(
            "SELECT survey_id FROM group_members WHERE ref = ? ORDER BY position, survey_id",
            (ref,),
        )
        return StoredGroup(*row, surveys=[m[0] for m in members])

    def survey_groups(self, survey_id: int) -> list[StoredGroup]:
        """The exclusion groups `survey_id` belongs to, by ref."""
        with self.read() as conn:
            refs = conn.execute(
                "SELECT ref FROM group_members WHERE survey_id = ? ORDER BY ref", (survey_id,)
            )
            return [g for g in (self._group(conn, r[0]) for r in refs.fetchall()) if g]

    def save_group(self, conn: sqlite3.Connection, group: StoredGroup) -> None:
        """Creates or overwrites a group and its member list."""
        conn.execute(
            "INSERT INTO survey_groups (ref, buyer_id, name, exclusion_period) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (ref) DO UPDATE SET name = excluded.name, "
            "exclusion_period = excluded.exclusion_period",
            (group.ref, group.buyer_id, group.name, group.exclusion_period),
        )
        conn.execute("DELETE FROM group_members WHERE ref = ?", (group.ref,))
        conn.executemany(
            "INSERT INTO group_members (ref, survey_id, position) VALUES (?, ?, ?)",
            [(group.ref, survey_id, n) for n, survey_id in enumerate(dict.fromkeys(group.surveys))],
        )

    def delete_group(self, conn: sqlite3.Connection, ref: str) -> None:
        conn.execute("DELETE FROM survey_groups WHERE ref = ?", (ref,))

    def set_memberships(self, conn: sqlite3.Connection, survey_id: int, refs: list[str]) -> None:
        """Makes `refs` exactly the groups of the survey (a survey PUT overwrites membership)."""
        conn.execute(
            "DELETE FROM group_members WHERE survey_id = ? AND ref NOT IN (SELECT value FROM "
            "json_each(?))",
            (survey_id, json.dumps(refs)),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO group_members (ref, survey_id, position) VALUES (?, ?, "
            "(SELECT COALESCE(MAX(position), -1) + 1 FROM group_members WHERE ref = ?))",
            [(ref, survey_id, ref) for ref in refs],
        )
