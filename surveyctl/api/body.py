"""Reading an answer's body within bounds: at most MAX_BODY bytes, and done within the
request's timeout.

requests reads a body whole, however long it is and however long it keeps coming: a service
(or whatever answers at its host) that sends gigabytes fills the memory, and one that sends a
byte now and then, each within the socket's timeout, holds the command for ever. Each answer is
read here instead, a piece at a time, and dropped once it is larger than any answer of the API
or still coming after the timeout.
"""

from __future__ import annotations

import time

import requests
from urllib3.exceptions import HTTPError

# The largest answer read: a page of 1,000 transactions is about 2.5 MB, a catalogue page or a
# page of 100 surveys with their targeting less. The sandbox takes requests of up to 16 MiB.
MAX_BODY = 64 * 1024 * 1024
_PIECE = 64 * 1024


class BodyTooLarge(Exception):
    """The answer is larger than MAX_BODY bytes."""


class BodyTooSlow(Exception):
    """The answer was still coming when its time was up."""


def read_body(response: requests.Response, seconds: float, limit: int = MAX_BODY) -> None:
    """Reads the body of `response` (sent with `stream=True`) into it, as requests does without
    `stream`, or raises BodyTooLarge or BodyTooSlow (the connection closed), or
    requests.ConnectionError when the connection fails on the way."""
    deadline = time.monotonic() + seconds
    raw = response.raw
    # read1 returns what one read of the socket gives, so a body that trickles in is checked
    # against the deadline at every piece (read waits for a whole piece); urllib3 < 2.1 lacks it.
    read = getattr(raw, "read1", raw.read)
    pieces: list[bytes] = []
    size = 0
    try:
        while piece := read(_PIECE, decode_content=True):
            size += len(piece)
            if size > limit:
                raise BodyTooLarge
            pieces.append(piece)
            if time.monotonic() > deadline:
                raise BodyTooSlow
    except HTTPError as exc:  # a reset or a read timeout in the middle of the body
        response.close()
        raise requests.ConnectionError(exc) from exc
    except (BodyTooLarge, BodyTooSlow):
        response.close()  # the rest is never read: the connection cannot be used again
        raise
    # What requests itself keeps a body read whole in: .content, .text and .json() read it.
    response._content = b"".join(pieces)
    response._content_consumed = True
