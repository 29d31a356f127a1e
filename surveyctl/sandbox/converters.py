"""Path converters of the sandbox's routes beyond werkzeug's own.

`<quota:buyer_quota_id>` takes any buyer_quota_id (slashes included, as `<path:...>` does)
except `performance`: `GET .../quotas/performance` is the quota performance call, so that word
never names a quota in a path (and `surveys.check_quota_id` refuses it as a buyer_quota_id, so
no quota exists that its path cannot reach). Without it the quota routes would also match that
path, and an OPTIONS or a wrong method there would advertise PUT, PATCH and DELETE in `Allow`.
"""

from __future__ import annotations

import re

from werkzeug.routing import PathConverter, ValidationError

# The last segment of the quota performance route (routes/quotas.py). The sandbox's own: it
# shares no code with the client but the contract in schemas/ (design), so that a client rule
# that forgot a reserved id is caught by the sandbox rather than agreed with.
RESERVED_QUOTA_SEGMENTS = ("performance",)


class QuotaIdConverter(PathConverter):
    """A buyer_quota_id in a path: any text but the reserved segments.

    The pattern leaves them out, so the rule does not match them at all (werkzeug lists the
    methods of every rule whose pattern matches in `Allow`, before it converts anything)."""

    regex = f"(?!(?:{'|'.join(map(re.escape, RESERVED_QUOTA_SEGMENTS))})$)" + PathConverter.regex

    def to_python(self, value: str) -> str:
        if value in RESERVED_QUOTA_SEGMENTS:
            raise ValidationError()  # the rule does not match; another may
        return value
