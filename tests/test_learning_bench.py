"""bench/bench_learning.py models the tool as shipped (issue 41 point 5): its histories run under the
configured retention through the trial ledger, and a retired lesson is never given again."""

from __future__ import annotations

from bench import bench_learning as bench


def test_a_history_under_a_small_retention_never_gives_a_retired_lesson_again() -> None:
    world = bench.World("beside", (0.0, -1.0, 0.0))
    retired = 0
    for seed in range(3):
        tracks, _ = bench.history(world, seed, 80, 10, (40, 80))
        assert all(track.given_retired == 0 for track in tracks)
        assert all(set(track.last) == {40, 80} for track in tracks)
        retired += tracks[1].retired is not None
    assert retired >= 2  # the -1 lesson is retired in (almost) every history, retention or not


def test_the_report_names_the_retention_and_the_horizons(capsys) -> None:
    bench.main(["--histories", "1", "--runs", "30", "--runs", "60", "--max-critiques", "10"])
    out = capsys.readouterr().out
    assert "== retention: max_critiques 10; 1 histories per world" in out
    assert "retired or helpful within 30" in out and "retired or helpful within 60" in out
    assert "retired lessons given again: in 0 of 3 histories" in out
