"""The attribute catalogue of an environment, per locale: every page, de-duplicated, cached.

The marketplace pages its catalogue (`total_pages` header) and repeats some questions across
pages (spec 4.6); `Catalog.locale()` reads them all and keeps the first occurrence of each
qualification_code. Each locale is cached under `.surveyctl/cache/catalog/<env>/<locale>.json`
for `ttl` seconds (a day by default); `refresh=True` fetches again. Staging and production
catalogues differ, hence one cache per environment.

A cache file is signed with the environment's API key (HMAC-SHA256 of what it holds). The
folder is in the project, where a pull request could commit a file that gives an answer's name
another code: the plan would show "Male (112)", and the apply send 112, with nothing in the
manifests to review. Without the key no one can sign such a file, so a file unsigned, signed
with another key, altered, of another environment or locale, or dated in the future is not
read: the locale is fetched again. Without a key there is no cache.
"""

from __future__ import annotations

import difflib
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from surveyctl.errors import ApiError, SurveyctlError, key_refused
from surveyctl.files import write_atomically

if TYPE_CHECKING:  # loading manifests must not load the HTTP stack
    from surveyctl.api import ApiClient

DEFAULT_TTL = 24 * 3600
CACHE_FORMAT = 1
# A locale's catalogue is a few hundred kilobytes; a file far past that is not one we wrote.
CACHE_BYTES = 64_000_000


class CatalogError(SurveyctlError):
    """The catalogue of a locale cannot be had (unknown locale, malformed answer)."""


class UnknownLocale(CatalogError):
    """The environment has no attribute catalogue for a locale (the service answered 400 or
    404); `known` lists the locales whose catalogue it has served (see `known_locales`)."""

    def __init__(
        self, environment: str, locale: str, status: int, known: list[str], said: str = ""
    ):
        if known:
            listed = f"; locales whose catalogue it has served so far: {', '.join(known)}"
        elif said:  # the service's words say what there is to say
            listed = ""
        else:
            listed = "; no catalogue of it has been read yet, so no locale can be listed"
        super().__init__(
            f"environment {environment!r} has no attribute catalogue for locale {locale!r} "
            f"(the service answered {status}{': ' + said if said else ''}){listed}"
        )
        self.locale = locale
        self.known = known


@dataclass(frozen=True)
class Answer:
    """One answer of a choice attribute: its condition code (as text) and its texts."""

    condition_code: str
    local_text: str
    eng_text: str


@dataclass(frozen=True)
class Attribute:
    """A qualification of the catalogue in one locale; `answers` is empty for free entry."""

    qualification_code: int
    desc: str
    text: str = ""
    answers: tuple[Answer, ...] = ()

    def answer(self, text: str) -> Answer | None:
        """The first answer whose local or English text is `text`, without regard to case or
        to spaces around either."""
        return self._by_text.get(text.strip().casefold())

    def answer_texts(self) -> list[str]:
        return [a.eng_text or a.local_text for a in self.answers]

    # Both made once per attribute: every name and code of every manifest is looked up here,
    # and a pass over the answers for each (51 states named in 1,000 surveys: 2.6 million
    # comparisons) made checking names grow with the square of the answers.
    @cached_property
    def condition_codes(self) -> frozenset[str]:
        return frozenset(a.condition_code for a in self.answers)

    @cached_property
    def _by_text(self) -> dict[str, Answer]:
        found: dict[str, Answer] = {}
        for answer in self.answers:
            for written in (answer.local_text, answer.eng_text):
                found.setdefault(written.strip().casefold(), answer)
        return found


class LocaleCatalog:
    """The attributes of one locale, found by qualification code or by name (desc)."""

    def __init__(self, locale: str, attributes: list[Attribute]):
        self.locale = locale
        self.by_code = {a.qualification_code: a for a in attributes}
        self._by_name: dict[str, Attribute] = {}
        for attribute in attributes:
            self._by_name.setdefault(attribute.desc.strip().casefold(), attribute)

    def by_name(self, name: str) -> Attribute | None:
        return self._by_name.get(name.strip().casefold())

    def closest_names(self, name: str, n: int = 3) -> list[str]:
        close = difflib.get_close_matches(name.strip().casefold(), list(self._by_name), n, 0.5)
        return [self._by_name[c].desc for c in close]

    def __len__(self) -> int:
        return len(self.by_code)


class Catalog:
    """The catalogue of one environment; locales are fetched (or read from cache) on demand.

    `client` is a callable returning the ApiClient, so that no connection is opened (and no
    embedded sandbox started) while every locale needed is fresh in the cache.
    """

    def __init__(
        self,
        client: Callable[[], ApiClient],
        environment: str,
        cache_dir: Path | None = None,
        *,
        ttl: float = DEFAULT_TTL,
        refresh: bool = False,
        classes: list[int] | None = None,
        signing_key: str | None = None,
    ):
        self._client = client
        self.environment = environment
        self.cache_dir = cache_dir if signing_key else None  # no key: nothing to sign with
        self._signing_key = signing_key or ""
        self.ttl = ttl
        self.refresh = refresh
        self.classes = classes
        self._locales: dict[str, LocaleCatalog] = {}
        self.fetched: list[str] = []  # locales read from the API in this run

    def locale(self, localization: str) -> LocaleCatalog:
        """The catalogue of `localization`; CatalogError when the service has none."""
        if localization not in self._locales:
            items = None if self.refresh else self._read_cache(localization)
            if items is None:
                items = self._fetch(localization)
                self._write_cache(localization, items)
            self._locales[localization] = LocaleCatalog(
                localization, [_attribute(item, localization) for item in items]
            )
        return self._locales[localization]

    def _fetch(self, localization: str) -> list[dict]:
        client = self._client()
        seen: dict[int, dict] = {}
        try:
            for page in client.iter_pages(
                client.get_attributes_page, localization=localization, classes=self.classes
            ):
                for item in page if isinstance(page, list) else []:
                    if _readable(item) and item["qualification_code"] not in seen:
                        seen[item["qualification_code"]] = item
        except ApiError as exc:
            if (refused := key_refused(exc)) is not None:  # said as every other read says it
                raise refused from exc
            if exc.status in (400, 404):
                # The service's words are kept: they may name the locale meant (the sandbox's
                # say "did you mean 'en_GB'?" of en_UK), which the list below cannot.
                raise UnknownLocale(
                    self.environment, localization, exc.status, self.known_locales(), exc.said
                ) from exc
            raise
        self.fetched.append(localization)
        return list(seen.values())

    def known_locales(self) -> list[str]:
        """The locales whose catalogue this environment has served: read in this run, or
        cached (fresh or not). The API has no call that lists its locales."""
        known = set(self._locales)
        folder = self._cache_folder()
        if folder is not None and folder.is_dir():
            known.update(path.stem for path in folder.glob("*.json"))
        return sorted(known)

    def _cache_folder(self) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / "catalog" / self.environment

    def _cache_file(self, localization: str) -> Path | None:
        folder = self._cache_folder()
        if folder is None:
            return None
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in localization)
        return folder / f"{safe}.json"

    def _read_cache(self, localization: str) -> list[dict] | None:
        path = self._cache_file(localization)
        if path is None or not path.is_file():
            return None
        # Imported here: `apply --help` loads this module, and the reader loads PyYAML.
        from surveyctl.yamlsafe import Limits, YamlProblem, read_text

        try:
            # Bounded, and regular files only: a link committed in its place to /dev/zero
            # would otherwise be read for ever.
            data = json.loads(read_text(path, Limits("catalogue cache file", CACHE_BYTES, 0)))
        except (YamlProblem, ValueError):
            return None  # a damaged cache is only a cache: fetch again
        if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
            return None
        if not self._signed(data, localization):
            return None
        fetched_at = data.get("fetched_at")
        # A date in the future would keep the file fresh for ever.
        if not isinstance(fetched_at, (int, float)):
            return None
        if not 0 <= time.time() - fetched_at <= self.ttl:
            return None
        items = data.get("attributes")
        # A fetch keeps only readable entries, so one that is not was damaged since: the
        # whole file is then no more trusted than unparseable JSON.
        if not isinstance(items, list) or not all(_readable(item) for item in items):
            return None
        return items

    def _write_cache(self, localization: str, items: list[dict]) -> None:
        path = self._cache_file(localization)
        if path is None:
            return
        payload: dict[str, Any] = {
            "format": CACHE_FORMAT,
            "environment": self.environment,
            "locale": localization,
            "fetched_at": time.time(),
            "attributes": items,
        }
        try:
            payload["signature"] = self._signature(payload)
            write_atomically(path, json.dumps(payload))
        except ValueError:
            pass  # a value JSON cannot carry exactly (NaN): fetched again next time
        except OSError:
            pass  # a full disk or a read-only folder: a cache not written is fetched again

    def _signed(self, data: dict, localization: str) -> bool:
        """Whether `data` is a file this environment's key signed, for this locale."""
        if data.get("environment") != self.environment or data.get("locale") != localization:
            return False
        signature = data.get("signature")
        try:
            return isinstance(signature, str) and hmac.compare_digest(
                signature, self._signature(data)
            )
        except (TypeError, ValueError):  # a value JSON cannot write again: not ours
            return False

    def _signature(self, data: dict) -> str:
        signed = {name: data.get(name) for name in _SIGNED}
        text = json.dumps(signed, sort_keys=True, separators=(",", ":"), allow_nan=False)
        key = self._signing_key.encode("utf-8", "surrogateescape")
        return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


# What a cache file's signature covers: all it holds but the signature.
_SIGNED = ("format", "environment", "locale", "fetched_at", "attributes")


def _readable(item: Any) -> bool:
    """Whether `item` has the shape _attribute reads: an object with an integer
    qualification_code, whose localizations' answers, where given, are lists."""
    if not isinstance(item, dict) or not isinstance(item.get("qualification_code"), int):
        return False
    entries = item.get("localizations")
    return not isinstance(entries, list) or all(
        not isinstance(entry, dict) or isinstance(entry.get("answers"), list | None)
        for entry in entries
    )


def _attribute(item: dict, localization: str) -> Attribute:
    localization_entry = _localization(item.get("localizations"), localization)
    answers = tuple(
        Answer(
            condition_code=str(answer.get("condition_code")),
            local_text=str(answer.get("local_text") or ""),
            eng_text=str(answer.get("eng_text") or ""),
        )
        for answer in localization_entry.get("answers") or []
        if isinstance(answer, dict) and answer.get("condition_code") is not None
    )
    return Attribute(
        qualification_code=item["qualification_code"],
        desc=str(item.get("desc") or ""),
        text=str(localization_entry.get("text") or ""),
        answers=answers,
    )


def _localization(entries: Any, localization: str) -> dict:
    """The entry of `localization`, else the first one (the service answers per locale)."""
    if not isinstance(entries, list):
        return {}
    wanted = localization.replace("-", "_").casefold()
    dicts = [e for e in entries if isinstance(e, dict)]
    for entry in dicts:
        if str(entry.get("locale", "")).replace("-", "_").casefold() == wanted:
            return entry
    return dicts[0] if dicts else {}
