"""An output file written as a command goes (`transactions list --output`): it replaces the
file of that name only when the command ends well, what the file system refuses is one error
naming the option and the file, and an error of the command itself stays the command's."""

from __future__ import annotations

from pathlib import Path

import pytest

from surveyctl.safety import OutputFile, OutputPathError

FULL_DEVICE = Path("/dev/full")  # every write to it fails: no space left on the device
needs_full_device = pytest.mark.skipif(not FULL_DEVICE.exists(), reason="needs /dev/full (Linux)")


def test_the_output_replaces_the_file_when_the_command_ends_well(tmp_path):
    export = tmp_path / "transactions.csv"
    export.write_text("an older export\n", encoding="utf-8")
    with OutputFile(export, "--output") as out:
        out.write("transaction_id,status\n")
        out.write("t-1,2\n")
    assert export.read_text(encoding="utf-8") == "transaction_id,status\nt-1,2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["transactions.csv"]


def test_a_command_that_fails_leaves_the_older_file_as_it_was(tmp_path):
    export = tmp_path / "transactions.csv"
    export.write_text("an older export\n", encoding="utf-8")
    with (
        pytest.raises(RuntimeError, match="the service went away"),
        OutputFile(export, "--output") as out,
    ):
        out.write("transaction_id,status\n")
        raise RuntimeError("the service went away")
    assert export.read_text(encoding="utf-8") == "an older export\n"
    assert [p.name for p in tmp_path.iterdir()] == ["transactions.csv"]


@needs_full_device
def test_an_output_that_fails_as_the_command_ends_is_an_error_naming_the_file():
    # What was written is still buffered when the command ends: the device refuses it only
    # as the file is closed, after every row was handed over.
    with pytest.raises(OutputPathError) as refused, OutputFile(FULL_DEVICE, "--output") as out:
        out.write("transaction_id,status\n")
    assert str(refused.value) == (
        "cannot write --output /dev/full: the file does not fit (no space left on device); "
        "free some space"
    )


@needs_full_device
def test_a_command_that_fails_raises_its_own_error_when_its_output_fails_too():
    with pytest.raises(RuntimeError, match="the service went away"):
        with OutputFile(FULL_DEVICE, "--output") as out:
            out.write("transaction_id,status\n")
            raise RuntimeError("the service went away")
