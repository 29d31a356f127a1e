"""Reading the service's answers as the documentation shows them, not only as the spec does.

The public documentation shows the service sending some numbers as text (`"Respondent Buyer
CPI": "1.30"`, `"Respondent LOI": ""`, range bounds `"21"`), a single transaction as an array of
one object, fields the spec does not list, 401 bodies with `msg`, and the transaction status
call's own error body (`ps_error_code`, `ps_error_message`). The client reads all of them; what
it hands on has the spec's shape where a caller computes with it (quota performance counts,
one transaction as an object). Survey bodies are compared and sent back through
`reconcile.normalise`, which reads their numbers the same way.

What the service is not documented to send is read here too, each one sentence rather than a
traceback: error bodies under the names gateways use (`message`, `error`), an answer of another
shape than the call's (`json_object`, `json_list`), a page that repeats the one before
(`check_next_page`) and the other answers of a paged call a read cannot trust (`total_pages`
that is no page count, and what `paging` finds: UntrustedPage).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import orjson
import requests

from surveyctl.api.secrets import redact_clipped
from surveyctl.errors import ApiError, SurveyctlError
from surveyctl.numbers import as_number
from surveyctl.surrogates import without_lone_surrogates

_LOG_BODY_LIMIT = 2000
# The most of an error body a message quotes.
_MESSAGE_LIMIT = 300
# The most of a message the body names (ps_api_response_message, msg, ...) an error quotes.
_NAMED_MESSAGE_LIMIT = 2000


def decode_json(content: bytes) -> Any:
    """A body of the service as JSON; ValueError when it is not JSON. orjson reads it: a page
    of 1,000 transactions (2.5 MB) in 3.8 ms, against 9 ms for the json module.

    A string may hold a lone surrogate escape (`"\\ud800"`, a title cut inside an emoji): valid
    JSON, but not text, which nothing can print, write to the state or send back as UTF-8. orjson
    refuses it (and integers past 64 bits); such a body is read with the json module, each lone
    surrogate made U+FFFD, the character that stands for one that cannot be shown."""
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return without_lone_surrogates(json.loads(content))


_TITLE = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_HIDDEN = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def error_message(response: requests.Response) -> tuple[int | None, str]:
    """The service's error code and message. Most bodies say `ps_api_response_code`/`_message`;
    401 bodies may say `msg` instead, and the transaction status call answers `ps_error_code`/
    `ps_error_message` (public facts). A message cut short is redacted before the cut, which
    must not keep the first characters of a key the service repeated."""
    try:
        body = decode_json(response.content)
    except ValueError:
        return None, plain_text(response)
    if not isinstance(body, dict):
        # Shown as the service wrote it: JSON (`["gone"]`, `null`), not as Python prints it.
        shown = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        return None, redact_clipped(shown, _MESSAGE_LIMIT, "")
    code, message = error_fields(body)
    if message:
        # The service's own sentence is kept longer than a body shown as it came, but not
        # without bound: a message of megabytes would flood the terminal and the CI log.
        return code, redact_clipped(message, _NAMED_MESSAGE_LIMIT)
    # A body under names none of the above: what it says is still the best account of why.
    shown = json.dumps(body, ensure_ascii=False) if body else ""
    return code, redact_clipped(shown, _MESSAGE_LIMIT, "") or str(response.reason)


# Where an error body may keep its message: the spec's name, the transaction status call's,
# a 401's `msg` (public facts), then the names gateways and frameworks in front of a service
# commonly use (`message`, `error`, `error.message`, `error_description`).
_MESSAGE_KEYS = (
    "ps_api_response_message", "ps_error_message", "msg", "message", "error", "error_description",
)  # fmt: skip


def error_fields(body: dict) -> tuple[int | None, str]:
    """The code and message of an error body, under each name the service gives them (see
    `error_message`); "" for a body that names no message."""
    code = body.get("ps_api_response_code", body.get("ps_error_code"))
    for key in _MESSAGE_KEYS:
        message = body.get(key)
        if isinstance(message, dict):
            message = message.get("message") or message.get("msg")
        if message and isinstance(message, str | int | float) and not isinstance(message, bool):
            return as_int(code), str(message)
    return as_int(code), ""


def plain_text(response: requests.Response) -> str:
    """A body that is not JSON, as one line: a gateway's HTML error page by its title (else its
    text without tags), anything else with its line breaks and runs of spaces made one space."""
    text = response.text or ""
    if _is_html(response, text):
        title = _TITLE.search(text)
        text = html.unescape(title.group(1) if title else _TAG.sub(" ", _HIDDEN.sub(" ", text)))
    return redact_clipped(" ".join(text.split()), _MESSAGE_LIMIT, "") or (response.reason or "")


def _is_html(response: requests.Response, text: str) -> bool:
    kind = response.headers.get("Content-Type", "").lower()
    return "html" in kind or text.lstrip()[:1] == "<"


def as_int(value: Any) -> int | None:
    """An integer the service may spell as a number or as text ("1006"); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    # isdigit() alone takes "²" and "٣", which int() refuses or reads as another number.
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return None


def with_numbers(record: Any, fields: tuple[str, ...]) -> Any:
    """A copy of `record` (a dict) with the named fields read as numbers."""
    if not isinstance(record, dict):
        return record
    return {key: as_number(value) if key in fields else value for key, value in record.items()}


# The codes a caller compares with integers (`== 44`, `in (11, 22)`, an id looked up in the
# state, an attribute's code looked up in the catalogue): read as integers also when the
# service spells them as text ("22").
SURVEY_CODES = ("ps_survey_id", "ps_survey_status")
ATTRIBUTE_CODES = ("qualification_code",)


def with_codes(body: Any, fields: tuple[str, ...]) -> Any:
    """`body` with its `fields` read as integers when they are integers written as text; any
    other value is left as it came."""
    if not isinstance(body, dict):
        return body
    fixed = {name: as_int(body[name]) for name in fields if name in body}
    return {**body, **{name: code for name, code in fixed.items() if code is not None}}


def survey_codes(body: Any) -> Any:
    """A survey (or a status answer) with its id and status read as integers (`with_codes`)."""
    return with_codes(body, SURVEY_CODES)


def single_record(body: Any) -> Any:
    """One record: the documentation shows a transaction answered as an array of one object."""
    if isinstance(body, list) and len(body) == 1 and isinstance(body[0], dict):
        return body[0]
    return body


def json_list(response: requests.Response, method: str, url: str) -> list[dict]:
    """A body that is a list of JSON objects (a page of surveys, quotas, transactions or
    attributes); ApiError when it is not JSON, not a list, or lists anything but objects."""
    body = _decoded(response, method, url)
    if not isinstance(body, list):
        raise ApiError(method, url, response.status_code, None, "the body is not a list")
    if not all(isinstance(item, dict) for item in body):
        raise ApiError(
            method, url, response.status_code, None, "the body is not a list of JSON objects"
        )
    return body


def json_object(response: requests.Response, method: str, url: str) -> dict:
    """A body that is one JSON object; ApiError when it is not JSON or not an object."""
    body = _decoded(response, method, url)
    if not isinstance(body, dict):
        raise ApiError(method, url, response.status_code, None, "the body is not a JSON object")
    return body


def json_any(response: requests.Response, method: str, url: str) -> Any:
    """A body that is JSON of any shape; ApiError when it is not JSON."""
    return _decoded(response, method, url)


def json_if_any(response: requests.Response) -> Any:
    """The body's JSON, or None when it has none or is not JSON: the answer of a call whose
    success its status says, and whose body only may say more (a status move, a group PUT)."""
    try:
        return decode_json(response.content)
    except ValueError:
        return None


def _decoded(response: requests.Response, method: str, url: str) -> Any:
    try:
        return decode_json(response.content)
    except ValueError as exc:
        raise ApiError(method, url, response.status_code, None, "the body is not JSON") from exc


# The most pages one read of a list takes: no list of the API comes near (the transaction
# export's 500 a page makes it 50 million transactions, the survey list's 100 ten million
# surveys), and a service that announces more, or keeps announcing one more, is not believed.
MAX_PAGES = 100_000


def total_pages(response: requests.Response, where: str, page: int) -> int | None:
    """The `total_pages` header as a number ("3", " 3 ", "3.0"; 0, an empty list's, as 1); None
    when it is absent or blank, for the caller to count pages without it. Any other value
    (`-1`, `2.5`, `abc`, `1e20`) is UntrustedPage: a read that believed it would end early
    or never."""
    raw = response.headers.get("total_pages")
    number = as_number(raw) if raw is not None else None
    if number is None:
        return None
    if isinstance(number, float) and number.is_integer():
        number = int(number)
    shown = f"total_pages {redact_clipped(raw, 40)!r}"
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise UntrustedPage(where, page, f"with {shown}, which is not a page count")
    if number > MAX_PAGES:
        raise UntrustedPage(
            where, page, f"with {shown}, more pages than one read takes ({MAX_PAGES})"
        )
    return max(1, number)


def clip(value: Any) -> str:
    """A body as the `--debug` log shows it: redacted, and cut after its first 2,000 characters."""
    text = value if isinstance(value, str) else json.dumps(value)
    return redact_clipped(text, _LOG_BODY_LIMIT)


class RepeatedPage(SurveyctlError):
    """The service answered a page with the very items of the page before it: it ignores the
    `page` parameter, and a reader asking for the next page while one is full would never end
    (nor would the list be whole)."""

    def __init__(self, what: str, page: int):
        super().__init__(
            f"the service answered page {page} of {what} with the items of page {page - 1}: "
            "it seems to ignore the page parameter, so the list cannot be read whole; nothing "
            "more was read"
        )


class UntrustedPage(SurveyctlError):
    """An answer of a paged call that cannot be right (a `total_pages` that is no page count,
    more items than the page holds, an empty page before the last, a page of items read
    already, more pages announced past MAX_PAGES): read on, the list would be incomplete,
    doubled or never end."""

    def __init__(self, where: str, page: int, problem: str):
        super().__init__(
            f"{where} answered page {page} {problem}: the list cannot be read whole, so nothing "
            "more was read"
        )


def check_within_most(where: str, page: int, still: str) -> None:
    """UntrustedPage before page `page` of a read past MAX_PAGES: the service `still` says
    there is more (announces more pages, answers full pages)."""
    if page > MAX_PAGES:
        raise UntrustedPage(where, MAX_PAGES, f"{still} ({MAX_PAGES} is the most one read takes)")


def check_next_page(what: str, page: int, items: list, previous: list | None) -> None:
    """RepeatedPage when `items` (page `page`, not empty) are those of the page before."""
    if items and items == previous:
        raise RepeatedPage(what, page)
