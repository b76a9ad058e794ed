"""Memory against planted and hand-made files: retention, selection, run records, time, cost."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from research_agent.cli.memory import app
from research_agent.config import Settings
from research_agent.errors import ConfigError, InputError
from research_agent.llm import ChatModel, ChatRequest, ChatResponse, Usage
from research_agent.memory.critique.judgement import critique_run
from research_agent.memory.effects.stats import compute_stats
from research_agent.memory.lessons.select import select_lessons
from research_agent.memory.store.files import load_all, load_critique, prune_critiques, scan_critiques
from research_agent.memory.store.schema import SCHEMA_VERSION, validate_critique
from tests.support.critique import ANSWER, RUN_ID, make_record
from tests.support.memory import NOW, make_critique, put, put_raw, put_text
from tests.support.memory_cli import deps_for

FAR_FUTURE = datetime(2099, 1, 1, tzinfo=UTC)
WEAK_GEO = (4, 4, 4, 2, 4)


def planted(meta: Path, real: int = 5, future: int = 4, junk: int = 2) -> tuple[list[str], list[str]]:
    """``real`` valid present critiques, ``future`` valid-looking ones dated 2099, ``junk`` broken
    files named with the present time; return (real ids newest first, every other file name)."""
    reals = [put(meta, make_critique(i, scores=WEAK_GEO)) for i in range(real)]
    others = [put(meta, make_critique(50 + i, when=FAR_FUTURE + timedelta(days=i))) for i in range(future)]
    others += [
        put_text(meta, make_critique(when=NOW - timedelta(minutes=i), query=f"junk {i}"), "scores: [broken\n")
        for i in range(junk)
    ]
    return [p.name for p in reals], [p.name for p in others]


def names(meta: Path) -> set[str]:
    return {p.name for p in meta.iterdir() if p.name.startswith("critique-")}


# --- retention ----------------------------------------------------------------------------


def test_prune_never_lets_junk_or_future_files_displace_real_ones(tmp_path: Path) -> None:
    reals, others = planted(tmp_path)
    removed = prune_critiques(tmp_path, 4, now=NOW)
    assert names(tmp_path) == set(reals[:4])
    assert {p.name for p in removed} == {reals[4], *others}


def test_prune_command_keeps_the_real_critiques(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reals, _ = planted(reports / "meta")
    result = CliRunner().invoke(app, ["prune", "--keep", "4", "--yes"], obj=deps_for(reports))
    assert result.exit_code == 0, result.output
    assert names(reports / "meta") == set(reals[:4])
    assert "pruned 7 file(s); keeping at most 4" in result.output


async def test_the_prune_after_each_critique_keeps_the_real_critiques(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path)
    meta = path.parent
    reals, _ = planted(meta)
    scripted_model.enqueue("critique", ANSWER)
    await critique_run(path, scripted_model, settings=Settings(max_critiques=4), now=NOW)
    assert names(meta) == {f"critique-{RUN_ID}.yaml", *reals[:3]}


def test_future_dated_files_are_named_by_validate(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    future = put(reports / "meta", make_critique(when=FAR_FUTURE))
    hand_dated = put_raw(reports / "meta", make_critique(1), timestamp="2099-05-01T10:00:00+02:00")
    loaded = {item.name: item.error for item in load_all(reports / "meta", now=NOW)}
    assert loaded[future.name] == "dated in the future (2099-01-01T00:00:00Z)"
    assert loaded[hand_dated.name] == "dated in the future (2099-05-01T08:00:00Z)"
    result = CliRunner().invoke(app, ["validate"], obj=deps_for(reports))
    assert result.exit_code == 1
    assert f"invalid  {future.name}: dated in the future" in result.output


# --- lesson selection ----------------------------------------------------------------------


def select(meta: Path, **kw):
    return select_lessons(meta, "technology", now=NOW, control_fraction=0.0, rng=random.Random(0), **kw)


def test_junk_never_crowds_out_real_critiques(tmp_path: Path) -> None:
    for i in range(3):
        put(tmp_path, make_critique(10 + i, scores=WEAK_GEO))  # older than the junk below
    for i in range(5):
        put_text(tmp_path, make_critique(i), "- junk\n")
    selection = select(tmp_path, limit=3)
    assert selection.considered == tuple(make_critique(10 + i).id for i in range(3))
    assert selection.adaptive


def test_a_file_dated_in_the_future_inside_is_excluded(tmp_path: Path) -> None:
    for i in range(3):
        put(tmp_path, make_critique(i, scores=WEAK_GEO))
    sneaky = put_raw(tmp_path, make_critique(5, scores=WEAK_GEO), timestamp="2099-01-01T00:00:00Z")
    selection = select(tmp_path)
    assert dict(selection.excluded)[sneaky.name] == "dated in the future (2099-01-01T00:00:00Z)"
    assert make_critique(5).id not in selection.considered


def test_lesson_ttl_out_of_range_is_a_config_error(tmp_path: Path) -> None:
    for ttl in (1e308, float("nan"), float("inf"), 0, -1):
        with pytest.raises(ConfigError, match="lesson_ttl_days"):
            select(tmp_path, ttl_days=ttl)


# --- planted run records --------------------------------------------------------------------


async def test_a_report_path_outside_the_reports_folder_is_refused(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path, report_path="/etc/passwd", id=RUN_ID)
    (tmp_path / "reports" / f"{RUN_ID}.md").unlink()
    with pytest.raises(InputError, match="lies outside the reports folder"):
        await critique_run(path, scripted_model, settings=Settings(), now=NOW)
    assert scripted_model.requests == []  # nothing reached the model


async def test_a_report_that_is_a_symlink_is_refused(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path)
    report = tmp_path / "reports" / f"{RUN_ID}.md"
    report.unlink()
    report.symlink_to("/etc/passwd")
    with pytest.raises(InputError, match="symlink refused"):
        await critique_run(path, scripted_model, settings=Settings(), now=NOW)
    assert scripted_model.requests == []


async def test_a_run_record_linked_from_outside_is_refused(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path)
    outside = tmp_path / "planted.yaml"
    path.rename(outside)
    path.symlink_to(outside)
    with pytest.raises(InputError, match="leads outside"):
        await critique_run(path, scripted_model, settings=Settings(), now=NOW)


def test_a_meta_folder_leading_outside_the_reports_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    put(elsewhere, make_critique(0))
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "meta").symlink_to(elsewhere)
    with pytest.raises(InputError, match="leads outside"):
        scan_critiques(reports / "meta")
    result = CliRunner().invoke(app, ["list"], obj=deps_for(reports))
    assert result.exit_code == 2 and result.output.startswith("error: ") and "leads outside" in result.output
    assert result.output.count("\n") == 1
    inside = tmp_path / "reports2"
    (inside / "real-meta").mkdir(parents=True)
    (inside / "meta").symlink_to(inside / "real-meta")
    assert scan_critiques(inside / "meta") == ([], [])  # a link that stays inside is fine


async def test_critique_run_refuses_a_meta_folder_leading_outside(tmp_path: Path, scripted_model) -> None:
    path = make_record(tmp_path)
    reports = tmp_path / "reports"
    (reports / "meta").rename(tmp_path / "elsewhere")
    (reports / "meta").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InputError, match="leads outside"):
        await critique_run(path, scripted_model, settings=Settings(), now=NOW)


# --- hand-written timestamps and numbers -----------------------------------------------------


@pytest.mark.parametrize(
    "stamp",
    [
        "2026-11-22T09:58:36+00:00",
        "2026-11-22T10:58:36+01:00",
        "2026-11-22T09:58:36Z",
        "2026-11-22T09:58:36.000000Z",
        "20261122T095836Z",
        "2026-11-22 09:58:36+0000",
        "2026-W47-7T09:58:36Z",
        "2026-326T09:58:36Z",
        "2026-11-22t09:58:36z",
    ],
)
def test_any_iso_8601_time_with_a_zone_is_accepted(tmp_path: Path, stamp: str) -> None:
    path = put_raw(tmp_path, make_critique(), timestamp=stamp)
    assert load_critique(path).timestamp == "2026-11-22T09:58:36.000000Z"


def test_a_hand_typed_unquoted_timestamp_loads(tmp_path: Path) -> None:
    critique = make_critique()
    text = yaml.safe_dump(critique.as_dict(), sort_keys=False)
    text = text.replace(f"timestamp: '{critique.timestamp}'", "timestamp: 2026-11-22T09:58:36+00:00")
    assert "timestamp: 2026-11-22T09:58:36+00:00\n" in text
    assert load_critique(put_text(tmp_path, critique, text)).timestamp == "2026-11-22T09:58:36.000000Z"


@pytest.mark.parametrize("stamp", ["2026-11-22T09:58:36", "2026-11-22", "2026-02-30T09:58:36Z", "yesterday"])
def test_a_time_without_a_zone_or_impossible_is_refused(stamp: str) -> None:
    data = make_critique().as_dict() | {"timestamp": stamp}
    problems = validate_critique(data)
    assert problems and problems[0].startswith("timestamp: ")
    assert "is not an ISO 8601 time with a zone" in problems[0]


@pytest.mark.parametrize("field", ["mean_score", "source_count"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_numbers_that_are_not_finite_are_refused(field: str, value: float) -> None:
    problems = validate_critique(make_critique().as_dict() | {field: value})
    assert problems == [f"{field}: {value} is not a finite number"]


# --- what the critique cost ------------------------------------------------------------------


class CostlyModel(ChatModel):
    """Answers the critique once; its usage carries retries and a known cost."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        usage = Usage(prompt_tokens=1200, completion_tokens=300, calls=1, retries=2, cost_usd=0.00036)
        return ChatResponse(data=ANSWER, text="", model="fast", usage=usage)


async def test_the_critique_stores_what_it_cost(tmp_path: Path) -> None:
    path = make_record(tmp_path)
    model = CostlyModel()
    critique = await critique_run(path, model, settings=Settings(), now=NOW)
    assert model.calls == 1
    stored = yaml.safe_load((path.parent / f"critique-{RUN_ID}.yaml").read_text())
    assert stored["usage"] == {
        "prompt_tokens": 1200,
        "completion_tokens": 300,
        "calls": 1,
        "retries": 2,
        "cost_usd": 0.00036,
    }
    assert stored["schema_version"] == SCHEMA_VERSION == 3
    assert load_critique(path.parent / f"critique-{RUN_ID}.yaml") == critique


def test_stats_sum_the_critique_cost_per_domain(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    meta = reports / "meta"
    usage = {"prompt_tokens": 1000, "completion_tokens": 200, "calls": 1, "retries": 0, "cost_usd": 0.01}
    put_raw(meta, make_critique(0), usage=usage)
    put_raw(meta, make_critique(1), usage=usage | {"cost_usd": 0.02, "calls": 2})
    put(meta, make_critique(2))  # written before critiques recorded their cost
    put_raw(meta, make_critique(3, domain="health"), usage=usage | {"cost_usd": None})
    put_raw(meta, make_critique(4, domain="health"), usage=usage)
    stats = {d.domain: d.cost for d in compute_stats(load_all(meta, now=NOW)).domains}
    assert stats["technology"].as_dict() == {
        "recorded": 2,
        "prompt_tokens": 2000,
        "completion_tokens": 400,
        "calls": 3,
        "cost_usd": 0.03,
    }
    assert stats["health"].cost_usd is None and stats["health"].tokens == 2400
    result = CliRunner().invoke(app, ["stats"], obj=deps_for(reports))
    assert result.exit_code == 0, result.output
    assert (
        "critique cost (technology): 2,400 tokens (2,000 prompt, 400 completion) in 3 call(s) "
        "over 2 critique(s), $0.0300" in result.output
    )
    assert "critique cost (health): 2,400 tokens" in result.output and "cost unknown" in result.output


def test_a_bad_usage_block_is_named() -> None:
    data = make_critique().as_dict() | {"usage": {"prompt_tokens": -1}}
    problems = validate_critique(data)
    assert "usage: missing field completion_tokens, calls, retries, cost_usd" in problems
    assert "usage.prompt_tokens: -1 is below the minimum of 0" in problems
