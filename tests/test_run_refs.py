"""Naming a run like git names a commit: short ids, prefixes, latest~N, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from research_agent.errors import InputError
from research_agent.run_refs import (
    AmbiguousRun,
    Runs,
    UnknownRun,
    resolve_ref,
    resolve_run,
    run_file,
    short_hash,
    short_id,
    short_ids,
)

OLD = "how-does-pathlib-work_20260101T000000000000Z"
MID = "how-does-asyncio-work_20260102T000000000000Z"
NEW = "pathlib-versus-os-path_20260103T000000000000Z"
IDS = (NEW, MID, OLD)  # newest first


def test_a_short_id_is_seven_hex_digits_of_the_id_s_hash_and_stable() -> None:
    assert short_id(OLD) == short_hash(OLD)[:7] == short_id(OLD, [MID, NEW])
    assert all(len(s) == 7 for s in short_ids(IDS).values())


def test_a_short_id_grows_only_when_two_ids_share_its_first_digits() -> None:
    # find two ids whose hashes share 7 digits (a birthday search over a few thousand slugs)
    seen: dict[str, str] = {}
    for n in range(200_000):
        run_id = f"q{n}_20260101T000000000000Z"
        head = short_hash(run_id)[:7]
        if head in seen:
            first, second = seen[head], run_id
            break
        seen[head] = run_id
    else:  # pragma: no cover - 200,000 draws from 2**28 collide with near certainty
        pytest.fail("no collision found")
    shown = short_ids([first, second, OLD])
    assert len(shown[first]) > 7 and len(shown[second]) > 7 and shown[first] != shown[second]
    assert len(shown[OLD]) == 7


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (OLD, OLD),
        (f"critique-{OLD}.yaml", OLD),
        (f"reports/meta/run-{MID}.yaml", MID),
        (f"{NEW}.md", NEW),
        ("latest", NEW),
        ("latest~0", NEW),
        ("latest~2", OLD),
        ("pathlib", NEW),  # a unique prefix of the full id
        ("how-does-path", OLD),
        (short_hash(MID)[:7], MID),
        (short_hash(MID)[:5], MID),  # any unique prefix of the hash
        (short_hash(MID)[:7].upper(), MID),
    ],
)
def test_every_way_of_naming_a_run_resolves(ref: str, expected: str) -> None:
    assert resolve_ref(ref, IDS) == expected


def test_an_ambiguous_prefix_lists_the_candidates_and_unknown_ones_say_so() -> None:
    with pytest.raises(AmbiguousRun) as caught:
        resolve_ref("how-does", IDS, what="critique")
    message = str(caught.value)
    assert "'how-does' is ambiguous: it names 2 critiques" in message
    assert f"{short_id(MID, IDS)} ({MID})" in message and f"{short_id(OLD, IDS)} ({OLD})" in message
    with pytest.raises(UnknownRun, match="no critique matches 'numpy' in /r/meta"):
        resolve_ref("numpy", IDS, what="critique", where="/r/meta")
    with pytest.raises(UnknownRun, match="latest~3: there are only 3 run"):
        resolve_ref("latest~3", IDS)
    with pytest.raises(UnknownRun, match="there are no critiques"):
        resolve_ref("latest", (), what="critique")
    with pytest.raises(InputError, match="no run named"):
        resolve_ref("  ", IDS)
    assert issubclass(AmbiguousRun, InputError) and issubclass(UnknownRun, InputError)


def test_runs_are_read_from_the_folder_listing_by_kind(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    (reports / "meta").mkdir(parents=True)
    for run_id in IDS:
        run_file(reports, "report", run_id).write_text("# r\n")
        run_file(reports, "record", run_id).write_text("id: x\n")
    run_file(reports, "critique", OLD).write_text("x: 1\n")
    run_file(reports, "failed", MID).write_text("x: 1\n")
    (reports / "README.md").write_text("not a run\n")
    (reports / "meta" / "critique.log").write_text("")
    runs = Runs.scan(reports)
    assert runs.ids("report") == IDS and runs.ids("record") == IDS
    assert runs.ids("critique") == (OLD,) and runs.ids("failed") == (MID,)
    assert runs.ids() == IDS and runs.short(OLD) == short_id(OLD)
    assert runs.resolve("latest", "critique") == OLD, "latest of the kind asked for"
    assert resolve_run(reports, "latest~1", "report") == MID
    assert Runs.scan(tmp_path / "missing").ids() == ()


def test_export_finds_a_report_by_any_reference(tmp_path: Path) -> None:
    from research_agent.export.files import find_report

    reports = tmp_path / "reports"
    reports.mkdir()
    for run_id in IDS:
        run_file(reports, "report", run_id).write_text("# r\n")
    assert find_report(reports, "latest") == run_file(reports, "report", NEW)
    assert find_report(reports, short_id(OLD)) == run_file(reports, "report", OLD)
    assert find_report(reports, "how-does-a") == run_file(reports, "report", MID)
    with pytest.raises(AmbiguousRun):
        find_report(reports, "how-does")
    with pytest.raises(InputError, match="no such file"):
        find_report(reports, str(tmp_path / "nope.md"))
