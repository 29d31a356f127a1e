"""The respondent return link: build it with its `ps_hash`, and verify one.

The hash rule (from the service's public documentation): ps_hash is the hex SHA-1 of the full
return URL without the ps_hash parameter, followed directly by the buyer's shared secret. It is
a plain hash of that concatenation, not an HMAC. The parameters come in a fixed order: `st`
first, then `transaction_id`, then the others (`quota_id`, `sqlc`, then any the URL already
carried). The receiver hashes the URL exactly as it arrives, so verification works on the raw
query text and never re-encodes it.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import SplitResult, quote, unquote_plus, urlsplit, urlunsplit

from surveyctl.errors import SurveyctlError
from surveyctl.statuses import RETURN_STATUS_NAMES as STATUS_NAMES
from surveyctl.surrogates import holds_lone_surrogate

HASH_PARAMETER = "ps_hash"


class LinkError(SurveyctlError):
    """A return link cannot be built, or does not verify."""


@dataclass(frozen=True)
class ReturnLink:
    """The parts of a return link that matter to the marketplace."""

    status: int
    transaction_id: str
    quota_ids: tuple[str, ...] = ()
    sqlc: bool = False

    @property
    def status_name(self) -> str:
        return STATUS_NAMES.get(self.status, "unknown")


def link_hash(unsigned_url: str, secret: str) -> str:
    """Hex SHA-1 of the URL (without ps_hash) followed directly by the shared secret."""
    return hashlib.sha1((unsigned_url + secret).encode("utf-8")).hexdigest()


# The query parameters a return link sets itself (spec 4.12), besides ps_hash.
OWN_PARAMETERS = ("st", "transaction_id", "quota_id", "sqlc")


def build_return_link(redirect_url: str, link: ReturnLink, secret: str) -> str:
    """`redirect_url` with st, transaction_id, quota_id, sqlc and a trailing ps_hash."""
    if not secret:
        raise LinkError("the shared secret is empty")
    _refuse_what_is_not_text(
        ("return URL", redirect_url),
        ("transaction id", link.transaction_id),
        ("quota id", list(link.quota_ids)),
        ("shared secret", secret),
    )
    if link.sqlc and not link.quota_ids:
        raise LinkError("sqlc needs a quota id (supplier-level QLC names the buyer quota)")
    if link.status not in STATUS_NAMES:
        raise LinkError(f"st {link.status} is not one of {sorted(STATUS_NAMES)}")
    if not link.transaction_id:
        raise LinkError(
            "the transaction id is empty: the link must name the respondent's transaction"
        )
    parts = _split(redirect_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise LinkError(f"{redirect_url!r} is not an http(s) URL")
    existing = [item for item in parts.query.split("&") if item and _name(item) != HASH_PARAMETER]
    taken = sorted({_name(item) for item in existing} & set(OWN_PARAMETERS))
    if taken:
        # Two st= in one link: which one the marketplace reads is not shown anywhere.
        raise LinkError(
            f"{redirect_url!r} already carries {', '.join(taken)}, which the link sets; give "
            "the marketplace's return URL without them"
        )
    ours = [f"st={link.status}", f"transaction_id={quote(link.transaction_id, safe='')}"]
    if link.quota_ids:
        _check_quota_ids(link.quota_ids)
        # Commas stay literal: the comma list is the documented QLC form.
        ours.append("quota_id=" + ",".join(quote(q, safe="") for q in link.quota_ids))
    if link.sqlc:
        ours.append("sqlc=true")
    unsigned = urlunsplit(parts._replace(query="&".join(ours + existing), fragment=""))
    return f"{unsigned}&{HASH_PARAMETER}={link_hash(unsigned, secret)}"


def _check_quota_ids(quota_ids: tuple[str, ...]) -> None:
    """A quota id holding a comma cannot be named: the marketplace decodes the query before
    it splits the list on commas, so `%2C` separates as `,` does."""
    for quota_id in quota_ids:
        if "," in quota_id:
            raise LinkError(
                f"quota id {quota_id!r} holds a comma, which separates the ids of quota_id "
                "(encoded or not): it cannot be named in a return link"
            )


def verify_return_link(url: str, secret: str) -> ReturnLink:
    """The link's content when its ps_hash matches; LinkError with the reason otherwise."""
    if not secret:
        raise LinkError("the shared secret is empty")
    _refuse_what_is_not_text(("link", url), ("shared secret", secret))
    parts = _split(url)
    items = parts.query.split("&") if parts.query else []
    hashes = [item for item in items if _name(item) == HASH_PARAMETER]
    if not hashes:
        raise LinkError("the link has no ps_hash parameter")
    if len(hashes) > 1:
        raise LinkError("the link carries ps_hash more than once")
    given = hashes[0].partition("=")[2].lower()
    rest = [item for item in items if _name(item) != HASH_PARAMETER]
    unsigned = urlunsplit(parts._replace(query="&".join(rest), fragment=""))
    expected = link_hash(unsigned, secret)
    if not hmac.compare_digest(given.encode("ascii", "replace"), expected.encode("ascii")):
        raise LinkError(
            "ps_hash does not match: the link was altered or signed with another secret"
        )
    return _content(rest)


def _content(items: list[str]) -> ReturnLink:
    names = [_name(item) for item in items]
    missing = [name for name in ("st", "transaction_id") if name not in names]
    if missing:
        raise LinkError(f"the hash matches, but the link has no {' and no '.join(missing)}")
    if names[:2] != ["st", "transaction_id"]:
        raise LinkError("the hash matches, but st and transaction_id are not the first parameters")
    # Raw values, decoded one by one. The quota list is split once decoded, as the marketplace
    # reads it: an encoded comma (`%2C`) separates ids too.
    raw = {name: item.partition("=")[2] for name, item in zip(names, items, strict=True)}
    try:
        status = int(raw["st"])
    except ValueError as exc:
        raise LinkError(f"st {unquote_plus(raw['st'])!r} is not a status code") from exc
    if status not in STATUS_NAMES:
        # The marketplace refuses such a return (400): signed or not, it records nothing.
        raise LinkError(
            f"the hash matches, but st {status} is not a return status (one of "
            f"{sorted(STATUS_NAMES)}): the marketplace refuses the link"
        )
    return ReturnLink(
        status=status,
        transaction_id=unquote_plus(raw["transaction_id"]),
        quota_ids=tuple(q for q in unquote_plus(raw.get("quota_id", "")).split(",") if q),
        sqlc=raw.get("sqlc", "").lower() == "true",
    )


def _refuse_what_is_not_text(*values: tuple[str, str | list[str]]) -> None:
    """LinkError naming the first value that holds half a character: bytes of an argument or
    variable that are not UTF-8 (the shell's `$'\\xff'`), which no URL or hash can be made of."""
    for what, value in values:
        if holds_lone_surrogate(value):
            raise LinkError(f"the {what} holds bytes that are not UTF-8 text: give it as UTF-8")


def _split(url: str) -> SplitResult:
    try:
        return urlsplit(url)
    except ValueError as exc:  # an unbalanced [ or ] around the host, or a host NFKC breaks
        raise LinkError(f"{url!r} is not an http(s) URL") from exc


def _name(item: str) -> str:
    return item.partition("=")[0]
