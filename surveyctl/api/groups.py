"""The calls of exclusion groups (v2): create, read, update and delete a group.

A group is named by its `buyer_surveygroup_ref`, which the service keeps unique; its surveys
are a list of ps_survey_ids in its body.
"""

from __future__ import annotations

from typing import Any

from surveyctl.api import paths
from surveyctl.api.reading import json_if_any
from surveyctl.api.transport import DELETED, Transport


class GroupCalls(Transport):
    """The exclusion group calls of the client."""

    def create_group(self, body: dict) -> dict:
        return self._object("POST", paths.survey_groups(), body=body, expected=(201,))

    def update_group(self, ref: str, body: dict) -> Any:
        """The spec shows neither the body nor the status of this answer (4.9): any 2xx the
        service may give an update (200, 201, or 204 with no body) is the group updated; its
        JSON, when it sends some, else None. The applier records the body it sent."""
        path = paths.survey_group(ref)
        response = self.request("PUT", path, body=body, expected=(200, 201, 202, 204))
        return json_if_any(response)

    def get_group(self, ref: str) -> dict:
        return self._object("GET", paths.survey_group(ref))

    def delete_group(self, ref: str) -> None:
        self.request("DELETE", paths.survey_group(ref), expected=DELETED)
