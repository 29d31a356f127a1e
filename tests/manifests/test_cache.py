"""A manifest file read cleanly before comes from the cache exactly as the reader makes it, and
anything else (a changed byte, a problem, a value JSON cannot carry, a pack cut short or
altered, another surveyctl, a folder others may write to) is read afresh."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import orjson
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from surveyctl.cli.main import cli
from surveyctl.manifests import load_manifests
from surveyctl.manifests.cache import UNUSED_DAYS, ParsedCache
from surveyctl.manifests.diagnostics import Diagnostics
from surveyctl.manifests.load import load_text
from surveyctl.yamlsafe import MarkedDict, MarkedList

from .documents import documents, scalars

EXAMPLES = Path(__file__).parents[2] / "examples"
MANIFESTS = sorted(
    path
    for path in EXAMPLES.rglob("*.yaml")
    if path.name != "surveyctl.yaml" and "ci" not in path.parts
)
US_SURVEY = EXAMPLES / "surveys" / "brand-tracker-us.yaml"
SURVEY = """kind: Survey
name: cached
spec:
  survey_title: Cached
  completes_required: 100
  quotas:
    - {buyer_quota_id: a, required_count: 50}
    - {buyer_quota_id: b, required_count: 50}
"""


def read(text: str, pack=None, filename: str = "surveys/cached.yaml"):
    """The documents and findings of `text`, through `pack` when one is given."""
    diagnostics = Diagnostics()
    documents = load_text(text, filename, diagnostics, pack)
    return documents, [str(d) for d in diagnostics.sorted()]


class Runs:
    """Reads one text at a time as separate commands do: each opens the pack of the same
    manifest folder, reads, and saves. Counts the hits and misses of all of them."""

    def __init__(self, cache: ParsedCache):
        self.cache = cache
        self.hits = self.misses = 0

    def read(self, text: str, filename: str = "surveys/cached.yaml"):
        pack = self.cache.pack(["surveys"])
        found = read(text, pack, filename)
        pack.save()
        self.hits += pack.hits
        self.misses += pack.misses
        return found

    @property
    def pack_file(self) -> Path:
        return self.cache.pack(["surveys"]).path

    def entries(self) -> dict:
        return orjson.loads(self.pack_file.read_bytes())["entries"]


@pytest.fixture
def runs(tmp_path) -> Runs:
    cache = ParsedCache.at(tmp_path / "cache")
    assert cache is not None
    return Runs(cache)


def marks(value) -> list:
    """Every place a value carries, walked in order: what a finding would point at."""
    if isinstance(value, MarkedDict):
        found = [("map", type(value).__name__, value.location)]
        for key, item in value.items():
            found += [("key", key, value.where(key)), *marks(item)]
        return found
    if isinstance(value, MarkedList):
        found = [("list", type(value).__name__, value.location)]
        for index, item in enumerate(value):
            found += [("item", index, value.where(index)), *marks(item)]
        return found
    return [("scalar", type(value).__name__, value)]


def unpacked(value) -> list:
    """Every mark a value keeps, as the code that copies marks (a program's members) takes
    them: all at once."""
    if isinstance(value, MarkedDict):
        own = [(key, mark.line, mark.column) for key, mark in value._marks.items()]
        inner = [unpacked(item) for item in value.values()]
    elif isinstance(value, MarkedList):
        own = [(mark.line, mark.column) for mark in value._marks]
        inner = [unpacked(item) for item in value]
    else:
        return []
    return [(value._start.line, value._start.column), own, inner]


def same_reads(first, second) -> None:
    (documents, findings), (again, findings_again) = first, second
    assert findings_again == findings
    assert [d.data for d in again] == [d.data for d in documents]
    assert [marks(d.data) for d in again] == [marks(d.data) for d in documents]
    assert [unpacked(d.data) for d in again] == [unpacked(d.data) for d in documents]
    assert [(d.location, d.index, d.finite) for d in again] == [
        (d.location, d.index, d.finite) for d in documents
    ]


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_an_example_read_again_comes_from_the_cache_with_its_values_and_every_line(path, runs):
    text = path.read_text(encoding="utf-8")
    fresh = read(text, None, str(path))

    first = runs.read(text, str(path))
    second = runs.read(text, str(path))

    assert (runs.misses, runs.hits) == (1, 1)
    same_reads(fresh, first)
    same_reads(fresh, second)


def test_a_key_or_item_not_there_points_at_its_mapping_or_list_from_the_cache_too(runs):
    fresh = read(SURVEY)[0][0].data
    runs.read(SURVEY)
    cached = runs.read(SURVEY)[0][0].data

    def asked(data) -> list:
        quotas = data["spec"]["quotas"]
        return [
            data["spec"].where("qualifications"),
            quotas.where(2),
            quotas.where(-2),
            quotas.where(1),
            quotas[1].where("quota_title"),
        ]

    assert runs.hits == 1
    assert asked(cached) == asked(fresh)
    assert asked(cached)[:3] == [cached["spec"].location, *[cached["spec"]["quotas"].location] * 2]


def test_a_file_read_again_under_another_name_points_its_findings_at_that_name(runs):
    runs.read(SURVEY, "surveys/one.yaml")
    (document,), _ = runs.read(SURVEY, "surveys/two.yaml")

    assert runs.hits == 1
    assert document.data.where("spec").file == "surveys/two.yaml"
    assert document.data["spec"]["quotas"].where(1).file == "surveys/two.yaml"


def test_a_changed_byte_is_read_afresh(runs):
    runs.read(SURVEY)
    (document,), _ = runs.read(SURVEY.replace("100", "200"))

    assert (runs.misses, runs.hits) == (2, 0)
    assert document.data["spec"]["completes_required"] == 200


def test_the_pack_keeps_only_the_entries_of_the_last_run(runs):
    runs.read(SURVEY)
    runs.read(SURVEY.replace("100", "200"))

    assert len(runs.entries()) == 1
    runs.read(SURVEY.replace("100", "200"))
    assert runs.hits == 1


def test_a_file_with_a_problem_is_read_afresh_each_time_and_says_it_each_time(runs):
    text = SURVEY + "name: twice\n"
    fresh = read(text)
    first = runs.read(text)
    second = runs.read(text)

    assert runs.hits == 0
    assert any("Duplicate key 'name'" in finding for finding in first[1])
    same_reads(fresh, first)
    same_reads(fresh, second)
    assert runs.entries() == {}


def test_a_document_left_out_for_its_depth_is_said_again_beside_one_that_loads(runs):
    too_deep = "deep: " + "[" * 40 + "]" * 40 + "\n"
    text = too_deep + "---\n" + SURVEY
    fresh = read(text)
    first = runs.read(text)
    second = runs.read(text)

    assert len(first[0]) == 1
    assert any("nests deeper" in finding or "too deep" in finding for finding in first[1])
    assert runs.hits == 0
    same_reads(fresh, first)
    same_reads(fresh, second)


def test_a_number_yaml_reads_otherwise_is_warned_of_again_when_it_comes_from_the_cache(runs):
    text = SURVEY.replace("completes_required: 100", "completes_required: 0100")
    first = runs.read(text)
    second = runs.read(text)

    assert runs.hits == 1
    assert any("0100 is read as the number 64" in finding for finding in first[1])
    same_reads(first, second)


@pytest.mark.parametrize(
    "value",
    ["2026-11-28", str(2**70), ".inf", "!!binary aGVsbG8=", "&a [1]\nshared: *a"],
    ids=["date", "integer-past-64-bits", "infinity", "bytes", "alias"],
)
def test_a_value_json_cannot_carry_exactly_is_read_afresh_every_time(runs, value):
    text = SURVEY + f"extra: {value}\n"
    first = runs.read(text)
    second = runs.read(text)

    assert runs.hits == 0
    assert runs.entries() == {}
    assert second[0][0].data["extra"] == first[0][0].data["extra"]


def test_a_document_that_is_not_a_mapping_is_said_again_from_the_cache(runs):
    fresh = read("just text\n")
    runs.read("just text\n")
    again = runs.read("just text\n")

    assert runs.hits == 1
    assert any("must be a mapping" in finding for finding in again[1])
    same_reads(fresh, again)


def test_entries_read_from_the_pack_are_kept_when_the_pack_is_written_again(runs):
    other = SURVEY.replace("cached", "other")
    pack = runs.cache.pack(["surveys"])
    read(SURVEY, pack, "surveys/a.yaml")
    pack.save()
    pack = runs.cache.pack(["surveys"])
    read(SURVEY, pack, "surveys/a.yaml")
    read(other, pack, "surveys/b.yaml")
    pack.save()  # a hit and a parse: written again with both

    pack = runs.cache.pack(["surveys"])
    first, second = read(SURVEY, pack, "surveys/a.yaml"), read(other, pack, "surveys/b.yaml")

    assert (pack.hits, pack.misses) == (2, 0)
    same_reads(read(SURVEY, None, "surveys/a.yaml"), first)
    same_reads(read(other, None, "surveys/b.yaml"), second)


def test_a_load_that_changes_nothing_leaves_the_pack_as_it_is(runs):
    runs.read(SURVEY)
    written = runs.pack_file.stat()

    runs.read(SURVEY)

    assert runs.hits == 1
    assert runs.pack_file.stat().st_ino == written.st_ino  # not written again


def test_an_entry_read_under_other_limits_is_not_used(runs):
    from surveyctl.yamlsafe import Limits

    runs.read(SURVEY)
    pack = runs.cache.pack(["surveys"])
    other = Limits("manifest file", max_bytes=1_000_000, max_values=1_000, max_depth=8)

    pack.load(SURVEY, "surveys/cached.yaml", other, lambda *problem: None)

    assert (pack.hits, pack.misses) == (0, 1)


def test_the_readers_own_sources_name_the_pack(runs):
    from surveyctl.manifests import cache

    names = {path.name for path in cache._reader_sources()}

    assert {"__init__.py", "bounds.py", "marked.py", "cache.py"} <= names


def test_the_same_text_twice_in_one_load_is_parsed_once(runs):
    pack = runs.cache.pack(["surveys"])

    first = read(SURVEY, pack, "surveys/one.yaml")
    second = read(SURVEY, pack, "surveys/two.yaml")

    assert (pack.misses, pack.hits) == (1, 1)
    assert second[0][0].data == first[0][0].data
    assert second[0][0].data.where("name").file == "surveys/two.yaml"


def _damaged_entry(runs: Runs, entry) -> None:
    (key,) = runs.entries()
    runs.pack_file.write_bytes(orjson.dumps({"entries": {key: entry}}))


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda raw: raw[: len(raw) // 2], id="cut-short-by-a-full-disk"),
        pytest.param(lambda raw: b"", id="empty"),
        pytest.param(lambda raw: b"\x00" * 64, id="zeros"),
        pytest.param(lambda raw: b'{"kind": "Survey"}', id="json-but-not-a-pack"),
        pytest.param(lambda raw: b'{"entries": []}', id="entries-not-a-mapping"),
        pytest.param(lambda raw: b"[]", id="a-list"),
        pytest.param(lambda raw: b"\xff\xfe" * 32, id="not-utf-8"),
        pytest.param(lambda raw: b"[" * 100_000 + b"]" * 100_000, id="nested-past-any-reader"),
    ],
)
def test_a_damaged_pack_is_a_miss_and_the_file_is_read_afresh(runs, damage):
    fresh = read(SURVEY)
    runs.read(SURVEY)
    runs.pack_file.write_bytes(damage(runs.pack_file.read_bytes()))

    again = runs.read(SURVEY)

    assert runs.hits == 0
    same_reads(fresh, again)


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param([], id="no-document"),
        pytest.param({"kind": "Survey"}, id="object"),
        pytest.param([[1, 1, 1, {}, [0, 0]]], id="document-cut-short"),
        pytest.param([[1, 1, 1, {}, {"0": 0}, []]], id="marks-not-a-list"),
        pytest.param([[1, 1, 1, {"k": 1}, [0, 0], []]], id="mapping-marks-missing"),
        pytest.param([[1, 1, 1, ["a", "b"], [0, 0, 0, 0], []]], id="list-marks-missing"),
        pytest.param([[1, 1, 1, {"k": [1]}, [0, 0, 0, 0, 1, 0], []]], id="inner-marks-missing"),
        pytest.param([[1, 1, 1, {"k": 1}, [0, 0, 0, 0, 1, 1], []]], id="marks-left-over"),
        pytest.param([[1, 1, 1, "text", [0, 0], []]], id="marks-of-a-scalar-document"),
        pytest.param([[1, 1, 1, {"k": 1}, [-1, 0, 0, 0], []]], id="mapping-negative-line"),
        pytest.param([[1, 1, 1, {"k": 1}, [0, 0, -1, 0], []]], id="key-negative-line"),
        pytest.param([[1, 1, 1, {"k": 1}, [0, 0, 0, -1], []]], id="key-negative-column"),
        pytest.param([[1, 1, 1, ["a"], [0, 0, 0, "0"], []]], id="column-text"),
        pytest.param([[1, 1, 1, ["a"], [0, 0, 0, 0.5], []]], id="column-fraction"),
        pytest.param([[1, 1, 1, ["a"], [0, 0, True, 0], []]], id="line-true"),
        pytest.param([[1, 1, 1, {}, [0, 0], [[1, 1, 5, 5]]]], id="reread-without-text"),
        pytest.param([[1, 1, 1, {}, [0, 0], [[1, 1, "010", "8"]]]], id="reread-number-text"),
        pytest.param([["1", 1, 1, {}, [0, 0], []]], id="document-line-text"),
        pytest.param([[1.5, 1, 1, {}, [0, 0], []]], id="document-line-fraction"),
        pytest.param([[0, 1, 1, {}, [0, 0], []]], id="document-line-0-lines-count-from-1"),
        pytest.param([[1, 1, 0, {}, [0, 0], []]], id="document-index-0"),
    ],
)
def test_an_entry_not_understood_is_a_miss_and_the_file_is_read_afresh(runs, entry):
    fresh = read(SURVEY)
    runs.read(SURVEY)
    _damaged_entry(runs, entry)

    again = runs.read(SURVEY)

    assert runs.hits == 0
    same_reads(fresh, again)


@pytest.mark.parametrize(("slack", "hits"), [(-1, 0), (0, 1)], ids=["past", "at"])
def test_a_pack_past_its_size_bound_is_not_read(runs, monkeypatch, slack, hits):
    from surveyctl.manifests import cache as module

    runs.read(SURVEY)
    monkeypatch.setattr(module, "MAX_PACK_BYTES", runs.pack_file.stat().st_size + slack)

    runs.read(SURVEY)

    assert runs.hits == hits


def test_a_miss_after_damage_writes_the_pack_again_and_the_next_read_is_a_hit(runs):
    runs.read(SURVEY)
    _damaged_entry(runs, [])
    runs.read(SURVEY)

    runs.read(SURVEY)

    assert runs.hits == 1


def test_an_entry_is_found_only_by_the_reader_that_wrote_it(tmp_path):
    runs = Runs(ParsedCache.at(tmp_path / "cache"))
    runs.read(SURVEY)
    other = Runs(ParsedCache.at(tmp_path / "cache"))
    other.cache._fingerprint = b"another surveyctl"  # as another version's sources would give

    other.read(SURVEY)

    assert (other.hits, other.misses) == (0, 1)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 2


def test_another_pyyaml_finds_no_entry(tmp_path, monkeypatch):
    Runs(ParsedCache.at(tmp_path / "cache")).read(SURVEY)
    monkeypatch.setattr(yaml, "__version__", "0.0-other")
    other = Runs(ParsedCache.at(tmp_path / "cache"))

    other.read(SURVEY)

    assert (other.hits, other.misses) == (0, 1)


def test_other_manifest_folders_keep_a_pack_of_their_own(runs):
    other = runs.cache.pack(["groups"])
    read(SURVEY, other)
    other.save()

    runs.read(SURVEY)

    assert runs.hits == 0
    assert len(list(runs.cache.folder.glob("*.json"))) == 2


def test_a_pack_no_load_used_for_30_days_is_removed_when_another_is_written(runs):
    old = runs.cache.pack(["old-folder"])
    read(SURVEY, old)
    old.save()
    stale = time.time() - (UNUSED_DAYS + 1) * 86400
    os.utime(old.path, (stale, stale))

    runs.read(SURVEY)

    assert not old.path.exists()
    assert runs.pack_file.exists()


def test_a_temporary_file_of_an_earlier_run_does_not_keep_the_pack_from_being_written(runs):
    runs.read(SURVEY)
    pack = runs.cache.pack(["surveys"])
    temporary = pack.path.with_name(f"{pack.path.name}.{os.getpid()}.tmp")
    temporary.mkdir()  # where a surveyctl of this process id once wrote its pack
    (temporary / "inside").write_text("kept")

    found = read(SURVEY.replace("100", "300"), pack)
    pack.save()
    runs.read(SURVEY.replace("100", "300"))

    assert found[0][0].data["spec"]["completes_required"] == 300
    assert runs.hits == 1
    assert (temporary / "inside").read_text() == "kept"


def test_a_pack_is_readable_by_its_user_alone(runs):
    earlier = os.umask(0o022)  # the usual umask, under which a file is made 0644
    try:
        runs.read(SURVEY)
    finally:
        os.umask(earlier)

    assert stat.S_IMODE(runs.pack_file.stat().st_mode) == 0o600


def test_a_pack_is_written_whole_with_no_temporary_file_left_beside_it(runs):
    runs.read(SURVEY)
    runs.read(SURVEY.replace("100", "300"))

    assert len(runs.entries()) == 1
    assert [path.name for path in runs.cache.folder.iterdir()] == [runs.pack_file.name]


def test_a_file_left_by_a_write_that_was_killed_is_removed_with_the_unused_packs(runs):
    left = runs.cache.folder / "0123abcd.json.4242.tmp"
    left.write_bytes(b'{"entries":{')
    stale = time.time() - (UNUSED_DAYS + 1) * 86400
    os.utime(left, (stale, stale))

    runs.read(SURVEY)

    assert not left.exists()


def test_a_pack_used_without_a_change_is_kept_as_used(runs):
    runs.read(SURVEY)
    stale = time.time() - (UNUSED_DAYS + 1) * 86400
    os.utime(runs.pack_file, (stale, stale))

    runs.read(SURVEY)

    assert runs.hits == 1
    assert runs.pack_file.stat().st_mtime > stale + 86400


def test_a_cache_folder_others_may_write_to_is_not_used(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)

    assert ParsedCache.at(folder) is None


def test_a_cache_folder_of_another_user_is_not_used(tmp_path):
    if os.getuid() != 0:
        pytest.skip("only root can give a folder to another user")
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)

    assert ParsedCache.at(folder) is None


def test_a_new_cache_folder_is_private_to_the_user(tmp_path):
    ParsedCache.at(tmp_path / "new" / "cache")

    mode = stat.S_IMODE((tmp_path / "new" / "cache").stat().st_mode)
    assert mode & 0o077 == 0


def test_a_cache_folder_that_cannot_be_made_reads_every_file(tmp_path):
    (tmp_path / "file").write_text("not a folder")

    assert ParsedCache.at(tmp_path / "file" / "cache") is None


def test_a_pack_that_cannot_be_written_leaves_the_next_run_to_parse(runs):
    runs.pack_file.mkdir()  # what stands at the pack's place is not a file
    (runs.pack_file / "inside").write_text("kept")

    first = runs.read(SURVEY)
    second = runs.read(SURVEY)

    assert runs.hits == 0
    same_reads(read(SURVEY), first)
    same_reads(read(SURVEY), second)
    assert (runs.pack_file / "inside").read_text() == "kept"
    assert list(runs.cache.folder.glob("*.tmp")) == []


# Values JSON carries exactly: the cache keeps such documents (others are read afresh).
DOCUMENTS = documents(
    scalars(
        st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
    )
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=DOCUMENTS, flow=st.booleans())
def test_any_document_comes_from_the_cache_as_the_reader_reads_it(tmp_path_factory, document, flow):
    runs = Runs(ParsedCache.at(tmp_path_factory.mktemp("cache")))
    text = yaml.safe_dump(document, default_flow_style=flow, allow_unicode=True)

    fresh = read(text)
    runs.read(text)
    again = runs.read(text)

    same_reads(fresh, again)


def test_load_manifests_reads_a_folder_from_the_cache_the_second_time(tmp_path):
    cache = ParsedCache.at(tmp_path / "cache")
    folder = tmp_path / "manifests"
    for path in MANIFESTS:
        target = folder / path.relative_to(EXAMPLES)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())

    first, found = load_manifests([folder], None, cache)
    pack = cache.pack([folder])
    read(MANIFESTS[0].read_text(encoding="utf-8"), pack, "x.yaml")
    second, found_again = load_manifests([folder], None, cache)

    assert pack.hits == 1
    assert [str(d) for d in found_again.sorted()] == [str(d) for d in found.sorted()]
    assert {n: s.body() for n, s in second.surveys.items()} == {
        n: s.body() for n, s in first.surveys.items()
    }


def test_validate_keeps_its_reads_in_the_cache_folder_the_environment_names(tmp_path):
    (tmp_path / "survey.yaml").write_bytes(US_SURVEY.read_bytes())
    cache_folder = tmp_path / "user-cache"
    runner = CliRunner(env={"SURVEYCTL_CACHE_DIR": str(cache_folder)})

    first = runner.invoke(cli, ["validate", "--offline", str(tmp_path / "survey.yaml")])
    second = runner.invoke(cli, ["validate", "--offline", str(tmp_path / "survey.yaml")])

    assert first.exit_code == second.exit_code == 0
    assert second.stdout == first.stdout
    (pack,) = (cache_folder / "manifests").glob("*.json")
    assert len(orjson.loads(pack.read_bytes())["entries"]) == 1


def test_a_cache_dir_of_off_keeps_no_cache(tmp_path, monkeypatch):
    (tmp_path / "survey.yaml").write_bytes(US_SURVEY.read_bytes())
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    runner = CliRunner(env={"SURVEYCTL_CACHE_DIR": "off"})

    result = runner.invoke(cli, ["validate", "--offline", str(tmp_path / "survey.yaml")])

    assert result.exit_code == 0
    assert not (tmp_path / "home").exists()


def test_in_ci_the_cache_is_kept_only_in_a_folder_named_for_it(tmp_path, monkeypatch):
    from surveyctl.variables import cache_folder

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("SURVEYCTL_CACHE_DIR", raising=False)
    assert cache_folder() == tmp_path / "home" / ".cache" / "surveyctl"

    monkeypatch.setenv("CI", "true")
    assert cache_folder() is None

    monkeypatch.setenv("SURVEYCTL_CACHE_DIR", str(tmp_path / "kept"))
    assert cache_folder() == tmp_path / "kept"


def test_debug_says_how_many_files_came_from_the_cache(tmp_path):
    (tmp_path / "surveys").mkdir()
    (tmp_path / "surveys" / "us.yaml").write_bytes(US_SURVEY.read_bytes())
    other = US_SURVEY.read_text(encoding="utf-8").replace("brand-tracker-us", "other-us")
    (tmp_path / "surveys" / "other.yaml").write_text(other, encoding="utf-8")
    runner = CliRunner(env={"SURVEYCTL_CACHE_DIR": str(tmp_path / "user-cache")})
    arguments = ["--debug", "validate", "--offline", str(tmp_path / "surveys")]

    first = runner.invoke(cli, arguments)
    second = runner.invoke(cli, arguments)

    (pack,) = (tmp_path / "user-cache" / "manifests").glob("*.json")
    said = "surveyctl.manifests > {} manifest file(s) read from the cache, {} parsed ({})"
    assert said.format(0, 2, pack) in first.stderr.splitlines()
    assert said.format(2, 0, pack) in second.stderr.splitlines()
