"""The documentation is true and whole: its links and cited files exist, each section once,
the README's example manifest is the one in examples/ and plans as the README says, and every
command line the docs show is one surveyctl reads: its command, options and choices exist."""

from __future__ import annotations

import inspect
import re
import shlex
import shutil
from pathlib import Path

import click
import yaml
from click.testing import CliRunner

from surveyctl import manifests, model
from surveyctl.cli.main import cli, hoist_global_options
from surveyctl.config_checks import MIN_KEY_LENGTH
from surveyctl.sandbox import catalogue as sandbox_catalogue

from ..reconcile.conftest import survey_manifest

REPOSITORY = Path(__file__).resolve().parents[2]
PAGES = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
EXAMPLE = REPOSITORY / "examples" / "surveys" / "brand-tracker-us.yaml"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
ANCHORED = re.compile(r"\]\(([^)#\s]*)#([^)\s]+)\)")
CITED_PATH = re.compile(r"`((?:surveyctl|schemas|tests|benchmarks|examples|\.ci)/[\w./<>-]*)`")
CITED = re.compile(r"`([\w./-]+\.md)`")


def _readme() -> str:
    return (REPOSITORY / "README.md").read_text(encoding="utf-8")


def test_every_relative_link_of_the_docs_leads_to_a_file_of_the_repository():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" not in target and not (page.parent / target).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []


def test_every_anchor_a_link_of_the_docs_names_is_a_heading_of_its_page():
    broken = []
    for page in PAGES:
        for target, anchor in ANCHORED.findall(page.read_text(encoding="utf-8")):
            linked = (page.parent / target).resolve() if target else page
            if linked.suffix == ".md" and anchor not in _anchors(linked):
                broken.append(f"{page.name}: {target}#{anchor}")
    assert broken == []


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the headings of `page` (lower case, punctuation dropped,
    spaces as dashes), leaving out lines of code blocks that look like headings."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    headings = re.findall(r"^#{1,6} (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_markdown_file_the_docs_cite_is_in_the_repository():
    missing = []
    for page in PAGES:
        for cited in CITED.findall(page.read_text(encoding="utf-8")):
            if not any((base / cited).exists() for base in (page.parent, REPOSITORY)):
                missing.append(f"{page.name}: {cited}")
    assert missing == []


def test_every_path_of_the_repository_the_docs_cite_exists():
    missing = []
    for page in PAGES:
        for cited in CITED_PATH.findall(page.read_text(encoding="utf-8")):
            if "<" not in cited and not (REPOSITORY / cited.rstrip("/")).exists():
                missing.append(f"{page.name}: {cited}")
    assert missing == []


def test_each_page_has_each_section_once():
    for page in PAGES:
        headings = re.findall(r"^(#{1,3} .+)$", page.read_text(encoding="utf-8"), re.M)
        repeated = {h for h in headings if headings.count(h) > 1}
        assert repeated == set(), page.name


def test_the_readme_manifest_is_the_example_of_the_repository():
    block = re.findall(r"```yaml\n(.*?)```", _readme(), re.S)[0]
    assert yaml.safe_load(block) == yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))


def test_changing_the_readme_shares_plans_what_the_readme_shows(tmp_path, monkeypatch):
    shutil.copytree(REPOSITORY / "examples", tmp_path / "examples")
    shutil.copytree(REPOSITORY / "schemas", tmp_path / "schemas")
    shutil.copy(REPOSITORY / "surveyctl.yaml", tmp_path / "surveyctl.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    # The quickstart's apply: the README's spend is that of every example.
    assert CliRunner().invoke(cli, ["apply", "examples/", "--auto-approve"]).exit_code == 0
    manifest = tmp_path / "examples" / "surveys" / "brand-tracker-us.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("share: 0.48", "share: 0.40").replace("0.52", "0.60"))
    planned = CliRunner().invoke(cli, ["plan", "examples/"]).stdout
    shown = re.search(r"0\.40/0\.60 plans:\n\n```\n(.*?)```", _readme(), re.S).group(1)
    survey_id = re.search(r"ps_survey_id (\d+)", planned).group(1)  # the README says 10001
    for line in filter(str.strip, shown.replace("10001", survey_id).splitlines()):
        assert line in planned, line


def test_the_plan_page_shows_names_next_to_codes_as_a_plan_of_the_examples_does(
    tmp_path, monkeypatch
):
    shutil.copytree(REPOSITORY / "examples", tmp_path / "examples")
    shutil.copy(REPOSITORY / "surveyctl.yaml", tmp_path / "surveyctl.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SURVEYCTL_ENV", raising=False)
    text = (REPOSITORY / "docs" / "plan.md").read_text(encoding="utf-8")
    section = text.split("## Names next to codes")[1]
    shown = re.search(r"\n```\n(.*?)```", section, re.S).group(1).splitlines()
    created = CliRunner().invoke(cli, ["plan"]).stdout  # before the first apply
    target = ["--target", "Survey/it-decision-makers"]
    assert CliRunner().invoke(cli, ["apply", "--auto-approve", *target]).exit_code == 0
    manifest = tmp_path / "examples" / "surveys" / "it-decision-makers-qbp.yaml"
    written = manifest.read_text(encoding="utf-8")
    manifest.write_text(written.replace('codes: ["111", "113"]', 'codes: ["111"]'))
    updated = CliRunner().invoke(cli, ["plan", *target]).stdout
    survey_id = re.search(r"ps_survey_id (\d+)", updated).group(1)  # the page says 10003

    for line in shown:
        planned = updated if line.lstrip().startswith("~") else created
        assert line.replace("10003", survey_id) in planned


def _synopses() -> dict[str, str]:
    """The synopses of the docs (`surveyctl plan [PATHS...] [--out FILE] ...`, continued on
    indented lines), joined by command."""
    found: dict[str, str] = {}
    for page in PAGES:
        for block in re.findall(r"```\w*\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            entries = re.findall(r"^surveyctl +(.*(?:\n +\S.*)*)", block, re.M)
            for entry in entries:
                if "[--" not in entry:
                    continue
                words = entry.split()
                command = " ".join(words[:2]) if _cli_command(words[:2]) else words[0]
                found[command] = found.get(command, "") + " " + entry
    return found


def _cli_command(words: list[str]) -> bool:
    """Whether `words` name a sub-command of a group (`surveys list`, `sandbox serve`)."""
    group = cli.get_command(click.Context(cli), words[0])
    return isinstance(group, click.Group) and words[1:2] and words[1] in group.commands


def test_each_synopsis_in_the_docs_lists_every_option_of_its_command():
    synopses = _synopses()
    assert {"plan", "apply", "import", "validate", "sandbox serve"} <= set(synopses)
    missing = []
    for command, synopsis in synopses.items():
        found = cli
        for word in command.split():
            found = found.get_command(click.Context(found), word)
        for option in found.params:
            names = [n for n in getattr(option, "opts", []) if n.startswith("--")]
            listed = any(re.search(re.escape(n) + r"(?![\w-])", synopsis) for n in names)
            if names and names != ["--help"] and not listed:
                missing.append(f"{command} {names[0]}")
    assert missing == []


def test_ci_runs_the_readmes_quickstart_test_command_as_it_is_written():
    quickstart = re.search(r"## Quickstart\n\n```sh\n(.*?)```", _readme(), re.S).group(1)
    test_command = [line for line in quickstart.splitlines() if "pytest" in line]
    ci = (REPOSITORY / ".ci" / "run").read_text(encoding="utf-8").splitlines()

    assert len(test_command) == 1
    assert test_command[0] in ci


def test_the_catalogue_page_counts_the_attributes_each_locale_serves():
    text = (REPOSITORY / "docs" / "catalogue.md").read_text(encoding="utf-8")
    stated = " ".join(re.search(r"With the default 20, (.*?)\n- ", text, re.S).group(1).split())
    served = {locale: len(_all_attributes(locale)) for locale in sandbox_catalogue.locales()}
    named = dict(re.findall(r"([a-z]{2}_[A-Z]{2}) \((\d+) attributes", stated))
    (others,) = re.findall(r"other locales \((\d+) attributes each\)", stated)
    pages = int(re.search(r"has (\d+) pages", stated).group(1))

    for locale, count in served.items():
        assert count == int(named.get(locale, others)), locale
        assert sandbox_catalogue.page_count(count) == pages, locale


def _all_attributes(locale: str) -> list[dict]:
    """Every attribute the sandbox serves in `locale`, read page by page as a client would."""
    found: dict[int, dict] = {}
    page, total = 1, 1
    while page <= total:
        items, total = sandbox_catalogue.attributes_page(locale, None, page)
        found.update((item["qualification_code"], item) for item in items)
        page += 1
    return list(found.values())


def test_the_python_calls_the_manifests_page_shows_take_the_arguments_it_names():
    text = (REPOSITORY / "docs" / "manifests.md").read_text(encoding="utf-8")
    section = text.split("## From Python")[1].split("\n## ")[0]
    owners = {"load_manifests": manifests.load_manifests, "ExclusionGroup": model.ExclusionGroup}
    shown = re.findall(r"`(load_manifests|ExclusionGroup\.body)\(([^)]*)\)`", section)
    assert shown
    for call, arguments in shown:
        function = owners[call.split(".")[0]]
        for attribute in call.split(".")[1:]:
            function = getattr(function, attribute)
        parameters = [p for p in inspect.signature(function).parameters if p != "self"]
        named = [a.strip() for a in arguments.split(",") if a.strip()]
        assert parameters[: len(named)] == named, call


def test_the_readme_states_the_shortest_api_key_surveyctl_takes():
    readme = " ".join(_readme().split())
    assert f"shorter than {MIN_KEY_LENGTH} characters" in readme


def test_the_state_page_lists_every_state_command_in_its_table():
    text = (REPOSITORY / "docs" / "state.md").read_text(encoding="utf-8")
    table = text.split("## Commands\n")[1].split("\n\n")[0]
    state = cli.get_command(click.Context(cli), "state")
    missing = [name for name in state.commands if f"`surveyctl state {name}" not in table]
    assert missing == []


def test_the_readme_names_every_global_option():
    listed = re.search(r"# global options \(([^)]*)\)", _readme()).group(1).split(", ")
    options = [o.opts[0] for o in cli.params if o.opts[0].startswith("--") and not o.is_eager]
    assert sorted(listed) == sorted(options)


FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
# A command as a block shows it: `surveyctl ...`, `$ surveyctl ...`, `VAR=... surveyctl ...`.
SHOWN = re.compile(r"^(?:\$ )?(?:[A-Z_]+=\S* )*(?:\.venv/bin/)?surveyctl (.+)$")
# Where the shell takes over from surveyctl: a comment, a pipe, a redirection, `&`.
SHELL_PART = re.compile(r"\s+#|\s\|\s|(?:^|\s)[12]?>&?|\s&$")


def _shown_commands() -> list[tuple[str, list[str], bool]]:
    """(page, arguments, in a code block) of every surveyctl command line the docs show: in
    code blocks (a line ending in `\\` continued), and in the text's `surveyctl ...` spans.
    Synopses (`[--out FILE]`) are left to the synopsis test."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        shown = [
            (match.group(1), True)
            for block in FENCED.findall(text)
            for line in block.replace("\\\n", " ").splitlines()
            if (match := SHOWN.match(line))
        ]
        spans = re.findall(r"`surveyctl ([^`]+)`", FENCED.sub("", text))
        shown += [(span, False) for span in spans]
        for line, in_block in shown:
            command = SHELL_PART.split(line)[0].replace("\\|", "|").strip()
            if command and "[--" not in command:
                found.append((page.name, shlex.split(command), in_block))
    return found


def _parsed(args: list[str], check_choices: bool) -> None:
    """Reads `args` as surveyctl's parser does, down to the last sub-command, without running
    anything: an option a command does not have, or a choice it does not offer (values in
    capitals, `SURVEY_ID`, stand for the reader's), is click's usage error."""
    command: click.Command = cli
    context = click.Context(cli, info_name="surveyctl")
    rest = list(hoist_global_options(args))
    while True:
        options, rest, _ = command.make_parser(context).parse_args(rest)
        if check_choices:
            _check_choices(command, options)
        if not isinstance(command, click.Group) or not rest:
            return
        sub = command.get_command(context, rest[0])
        if sub is None:
            raise click.UsageError(f"no command {rest[0]!r}")
        context = click.Context(sub, info_name=rest[0], parent=context)
        command, rest = sub, rest[1:]


def _check_choices(command: click.Command, options: dict) -> None:
    for param in command.params:
        if isinstance(param.type, click.Choice) and param.name in options:
            given = options[param.name]
            for value in given if isinstance(given, list) else [given]:
                placeholder = re.fullmatch(r"[A-Z_]+|\.\.\.", str(value))
                if isinstance(value, str) and not placeholder:
                    param.type.convert(value, param, None)


def test_every_command_line_the_docs_show_has_only_options_its_command_has():
    shown = _shown_commands()
    assert len(shown) > 250
    unread = []
    for page, args, _ in shown:
        try:
            _parsed(args, check_choices=False)
        except click.UsageError as exc:
            unread.append(f"{page}: surveyctl {shlex.join(args)}: {exc.format_message()}")
    assert unread == []


def test_every_command_line_of_a_docs_block_gives_each_choice_a_value_it_takes():
    unread = []
    for page, args, in_block in _shown_commands():
        try:
            _parsed(args, check_choices=in_block)
        except click.UsageError as exc:
            unread.append(f"{page}: surveyctl {shlex.join(args)}: {exc.format_message()}")
    assert unread == []


def _leaf_commands(group: click.Group = cli, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name in group.list_commands(click.Context(group)):
        command = group.get_command(click.Context(group), name)
        if isinstance(command, click.Group):
            found.update(_leaf_commands(command, f"{prefix}{name} "))
        else:
            found[f"{prefix}{name}"] = command
    return found


def test_the_readme_names_every_command_whose_format_takes_json_and_no_other():
    sentence = re.search(r"`--format json` is for programs on (.*?);", " ".join(_readme().split()))
    named = set(re.findall(r"`([^`]+)`", sentence.group(1)))
    taking = {
        path
        for path, command in _leaf_commands().items()
        for param in command.params
        if "--format" in getattr(param, "opts", []) and "json" in param.type.choices
    }
    assert named == taking


def test_the_commands_the_readme_says_have_no_format_have_none():
    sentence = re.search(r"; (`render`.*?) without `--format`", " ".join(_readme().split()))
    named = {name.split(" --")[0] for name in re.findall(r"`([^`]+)`", sentence.group(1))}
    assert named >= {"render", "state show", "state list", "adjustments"}
    commands = _leaf_commands()
    with_format = [n for n in named if any("--format" in p.opts for p in commands[n].params)]
    assert with_format == []


def test_the_surveys_table_the_plan_page_shows_has_the_columns_surveys_list_prints(run_cli, api):
    section = (REPOSITORY / "docs" / "plan.md").read_text(encoding="utf-8")
    shown = re.search(r"\n```\n(ID +STATUS .*?)\n", section).group(1)
    api.create_survey(survey_manifest("listed")["spec"])
    printed = run_cli("surveys", "list").stdout.splitlines()[0]
    assert re.split(r"  +", shown.strip()) == re.split(r"  +", printed.strip())
