"""The C decode core under AddressSanitizer + UndefinedBehaviorSanitizer.

A bounded run (seconds) is part of the normal suite; the 100,000-input run
is marked slow (``python -m tests.fuzz.run_fuzz`` runs any size).  Every run
fails on a crash, a sanitizer report, a leak, or a sample whose output
breaks the contract (see fuzz_decode.c)."""
from __future__ import annotations

import json

import pytest

from tests.fuzz.run_fuzz import (
    SanitizersUnavailable,
    build,
    fuzz,
    replay,
    target,
    write_seeds,
)
from tests.hostile_jpegs import (
    photo_like,
    truncations,
    with_app_segments,
    with_dimensions,
    with_repeated_last_scan,
)


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    work = tmp_path_factory.mktemp("fuzz")
    try:
        binary = build(work)
    except SanitizersUnavailable as e:
        pytest.skip(f"fuzz driver not built: {e}")
    return binary, write_seeds(work / "seeds"), work


# NOTE [ Bounded by inputs ]
# The suite's fuzz runs are bounded by a count of inputs, never by seconds: with the
# fuzzer's fixed seed every choice comes from the inputs (fuzz_decode.c), so a run
# reaches the same paths on any processor, however fast.

def test_bounded_fuzz_run(driver):
    binary, seeds, work = driver
    summary = fuzz(binary, seeds, inputs=4000, jobs=1, cwd=work)
    assert summary["inputs"] == 4000
    statuses = summary["statuses"]
    assert statuses["0"] > 0 and statuses["3"] + statuses["4"] > 0  # both outcomes reached
    assert summary["bgr_rows"] > 0  # OpenCV's BGR rows of whole images decoded too


def test_bounded_run_of_the_dc_scans_target_rewrites_progressive_files(driver):
    binary, _, work = driver
    seeds = write_seeds(work / "progressive-seeds", "dc_scans")
    summary = fuzz(target(binary, "dc_scans"), seeds, inputs=1500, jobs=1, cwd=work)
    assert summary["inputs"] == 1500
    # Every input goes to the rewrite; about half the mutations of progressive files
    # are still rewritten (the decode target got there for about 1 input in 50 here).
    assert summary["rewritten"] >= summary["inputs"] // 3, summary


def test_a_saved_input_replays_the_same_whatever_the_fuzzer_seed(driver, tmp_path):
    """Every choice made for an input comes from its bytes (libFuzzer's convention):
    a crash saved from one run reproduces from the file alone."""
    binary, _, work = driver
    good = photo_like(160, 120, seed=1)
    for k, (_, data) in enumerate(truncations(good)):
        (tmp_path / f"t{k}.jpg").write_bytes(data)
    (tmp_path / "good.jpg").write_bytes(good)
    (tmp_path / "progressive.jpg").write_bytes(photo_like(96, 80, seed=4, progressive=True))
    for name in ("decode", "dc_scans"):
        runs = [json.loads(replay(target(binary, name), [tmp_path], work, seed=s)
                           .splitlines()[-1]) for s in (1, 2, 3)]
        files = len(list(tmp_path.iterdir()))  # each decoded as a batch of two
        assert runs[0]["inputs"] == 0 and sum(runs[0]["statuses"].values()) == 2 * files
        assert runs[1] == runs[0] and runs[2] == runs[0], runs


def test_hostile_files_replayed_under_sanitizers(driver, tmp_path):
    binary, _, work = driver
    good = photo_like(160, 120, seed=1)
    progressive = photo_like(160, 120, seed=2, progressive=True)
    files = {f"t{k}": d for k, (_, d) in enumerate(truncations(good))}
    files |= {"bomb": with_dimensions(good, 65500, 65500),
              "scans": with_repeated_last_scan(progressive, 1500),
              "exif": with_app_segments(good, 0xE1, 20, b"Exif\0\0")}
    for name, data in files.items():
        (tmp_path / f"{name}.jpg").write_bytes(data)
    assert f"replayed {len(files)} inputs" in replay(binary, [tmp_path], work)


@pytest.mark.slow
def test_hundred_thousand_inputs(driver):
    binary, seeds, work = driver
    summary = fuzz(binary, seeds, inputs=100_000, jobs=2, cwd=work)
    assert summary["inputs"] == 100_000
