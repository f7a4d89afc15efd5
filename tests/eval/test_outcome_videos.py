"""`benchmarks.hab_learned --outcome-videos` films the first success and the first failure
of a configuration by replaying those episodes alone."""

import json

import pytest

from benchmarks import hab_learned

pytest.importorskip("mujoco")


@pytest.mark.slow  # four full prepare_groceries episodes (two run, two filmed): 85 s on 2 cores
def test_outcome_videos_replay_the_first_success_and_failure(tmp_path):
    # prepare_groceries with oracle skills: val episode 0 fails (an object lands off its goal)
    # and episode 1 succeeds, so both outcomes are filmed; either branch is checked anyway
    out, videos = tmp_path / "out", tmp_path / "videos"
    for outcome in ("success", "failure"):  # films of an earlier run: this scenario's go
        (videos / "oracle" / outcome).mkdir(parents=True)
        (videos / "oracle" / outcome / "prepare_groceries_old-run.mp4").write_bytes(b"x")
    other = videos / "oracle" / "success" / "tidy_house_old-run.mp4"
    other.write_bytes(b"x")
    argv = ["--scenarios", "prepare_groceries", "--configs", "oracle", "--episodes", "2",
            "--outcome-videos", "--video-dir", str(videos), "--out", str(out)]  # fmt: skip
    assert hab_learned.main(argv) == 0
    result = json.loads((out / "results_prepare_groceries_oracle.json").read_text())
    outcomes = {e["success"] for e in result["episodes"]}
    assert result["config"]["wall_time_s"] > 0  # the configuration's own wall time
    table = (out / "table.md").read_text()
    assert other.exists()  # another scenario's film stays
    for outcome, flag in (("success", True), ("failure", False)):
        films = list((videos / "oracle" / outcome).glob("prepare_groceries_*.mp4"))
        if flag in outcomes:
            first = next(e for e in result["episodes"] if e["success"] == flag)
            assert [f.name for f in films] == [f"prepare_groceries_{first['episode_id']}.mp4"]
            assert films[0].stat().st_size > 1000
            assert f"prepare_groceries oracle {outcome} `{films[0]}`" in table
            assert "replay ended otherwise" not in table
        else:
            assert films == [] and f"no {outcome} to film" in table
