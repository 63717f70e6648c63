"""python -m jpegloader.benchmark: options, JSON schema, stage breakdown,
advice, plot and the native PIL label.  (Speed itself is measured in
benchmarks/, never asserted here.)"""
from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata, util
from pathlib import Path

import pytest

from jpegloader.bench import ceiling as bench_ceiling
from jpegloader.bench import cli, corpora, measure, report
from tests.conftest import REPO, shared


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jpegloader.benchmark", *map(str, args)],
                          capture_output=True, text=True, cwd=REPO, timeout=300, check=False)


def _exit_status(*args) -> int:
    """cli.main's exit status, in this process (argparse's errors raise SystemExit)."""
    try:
        return cli.main([str(a) for a in args])
    except SystemExit as stop:
        return stop.code


def test_help_and_option_errors(tmp_path, capsys):
    shown = _cli("--help")  # the module runs as a program
    assert shown.returncode == 0
    for option in ("--workers", "--consumer-ms", "--plot", "--json", "--pipeline"):
        assert option in shown.stdout
    assert _exit_status("--workers", "two") == 2
    assert _exit_status("--workers", "-1") == 2
    assert _exit_status("--consumer-ms", "-5") == 2
    assert _exit_status("--memory-runs", "-1") == 2
    capsys.readouterr()
    assert _exit_status("--pipeline", "resnet") == 2
    assert "unknown pipeline" in capsys.readouterr().err


def test_data_takes_a_corpus_by_name(small_folder, tmp_path, monkeypatch, capsys):
    # as the README's reproduction lines write it: --data imagenet-sample
    (tmp_path / "my-corpus").symlink_to(small_folder)
    monkeypatch.setenv("JPEGLOADER_TEST_DATA", str(tmp_path))
    assert corpora.find_corpus(Path("my-corpus")) == tmp_path / "my-corpus"
    assert corpora.find_corpus(Path("elsewhere/my-corpus")) is None
    with pytest.raises(SystemExit) as info:
        cli.main(["--data", "no-such-corpus", "--workers", "0"])
    assert info.value.code == 2
    assert f"nor a corpus in {tmp_path}" in capsys.readouterr().err
    assert cli.main(["--data", "my-corpus", "--workers", "0", "--epochs", "1", "--warmup", "0",
                     "--batch-size", "4", "--recipe", "eval", "--no-memory"]) == 0
    out = capsys.readouterr().out
    assert f"--data my-corpus: {tmp_path / 'my-corpus'}" in out
    assert "eval    workers=0 epoch 1/1 torch" in out  # torch's loader, by name


def test_plot_without_matplotlib_is_a_usage_error(monkeypatch, capsys):
    real = util.find_spec
    monkeypatch.setattr(util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    with pytest.raises(SystemExit) as info:
        cli.main(["--plot", "x.png"])
    assert info.value.code == 2
    assert "jpegloader[bench]" in capsys.readouterr().err


def test_plot_into_a_file_is_a_usage_error(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="matplotlib is a test dependency")
    (tmp_path / "plots").write_bytes(b"")
    for path in (tmp_path / "plots", tmp_path / "new.png"):  # a file, or a file's name
        with pytest.raises(SystemExit) as info:
            cli.main(["--plot", str(path)])
        assert info.value.code == 2
        assert "takes a folder" in capsys.readouterr().err
    assert not (tmp_path / "new.png").exists()


def test_run_json_schema_stages_and_plot(small_folder, tmp_path, capsys):
    out, pictures = tmp_path / "r.json", tmp_path / "plots" / "run"
    args = ["--data", small_folder, "--workers", "0,2", "--epochs", "1", "--warmup", "0",
            "--batch-size", "4", "--consumer-ms", "2", "--no-memory", "--json", out]
    if util.find_spec("matplotlib") is not None:
        args += ["--plot", pictures]
    assert cli.main([str(a) for a in args]) == 0
    text = capsys.readouterr().out
    assert "where jpegloader's time goes" in text and "PIL from" in text
    report = json.loads(out.read_text())
    assert set(report) >= {"dataset", "workers", "batch_size", "epochs", "warmup",
                           "consumer_ms", "native_pil", "torch", "python", "cpus", "results"}
    assert report["workers"] == [0, 2] and report["consumer_ms"] == 2
    assert set(report["results"]) == {"train", "eval"}
    for pipeline in ("train", "eval"):
        by_workers = report["results"][pipeline]
        assert set(by_workers) == {"0", "2"}
        for workers, r in by_workers.items():
            assert set(r) >= {"native", "jpegloader", "ratio", "ratio_per_epoch_pair",
                              "waited_fraction", "advice"}
            stages = r["jpegloader"]["stages_ms_per_img"]
            assert stages["decode"] > 0 and stages["augment"] > 0 and stages["read"] > 0
            assert ("wait" in stages) == (workers != "0")
            assert 0 <= r["waited_fraction"] <= 1
            assert r["native"]["epochs"][0]["images"] == 24
            assert "pss_mib" not in r["native"] and "pss_mib" not in r["jpegloader"]
    # the sweep's curve in one table: a row per pipeline and worker count
    sweep = text.split("scaling against num_workers")[1].split("where jpegloader's")[0]
    rows = [line.split() for line in sweep.splitlines() if line.startswith(("train", "eval"))]
    assert [(r[0], r[1]) for r in rows] == [("train", "0"), ("train", "2"), ("eval", "0"),
                                            ("eval", "2")]
    for by_workers in report["results"].values():
        assert all(0 < r["jpegloader"]["main_busy"] for r in by_workers.values())
    if util.find_spec("matplotlib") is not None:
        from jpegloader.bench.plots import NAMES
        assert sorted(p.name for p in pictures.iterdir()) == sorted(NAMES)
        for name in NAMES:
            assert (pictures / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            assert f"{pictures / name}" in text


@pytest.mark.integration  # whole recipes, memory in new processes
def test_memory_is_each_loader_alone_in_new_processes_the_median_of_the_runs(small_folder,
                                                                             tmp_path, capsys):
    out = tmp_path / "r.json"
    args = ["--data", small_folder, "--pipeline", "eval", "--workers", "2", "--epochs", "1",
            "--warmup", "0", "--batch-size", "4", "--memory-runs", "2", "--json", out]
    assert cli.main([str(a) for a in args]) == 0
    text = capsys.readouterr().out
    r = json.loads(out.read_text())["results"]["eval"]["2"]
    for name in ("native", "jpegloader"):  # measured alone in a new process
        for key in ("pss_mib", "held_mib"):
            runs = r[name][f"{key}_per_run"]
            assert len(runs) == 2 and min(runs) > 0
            assert r[name][key] == pytest.approx(sum(runs) / 2)  # the median
    assert "PSS MiB" in text and "held MiB" in text and "the median of 2 runs" in text


@pytest.mark.integration  # whole recipes, memory in new processes
def test_multi_view_pipelines_count_images_and_memory(small_folder, tmp_path, capsys):
    """--pipeline dino,simclr: a batch is a list of views; images are counted once and the
    memory run reads every view."""
    out = tmp_path / "r.json"
    args = ["--data", small_folder, "--pipeline", "dino,simclr", "--workers", "0", "--epochs",
            "1", "--warmup", "0", "--batch-size", "4", "--memory-runs", "1", "--json", out]
    assert cli.main([str(a) for a in args]) == 0
    assert "views 3-10 of 10 (local_transfo): native: decode" in capsys.readouterr().out
    for r in json.loads(out.read_text())["results"].values():
        assert r["0"]["native"]["epochs"][0]["images"] == 24
        assert r["0"]["jpegloader"]["epochs"][0]["images"] == 24
        assert r["0"]["jpegloader"]["pss_mib"] > 0


def _summary(img_per_s: float, waited: float) -> dict:
    return {"jpegloader": {"img_per_s": img_per_s,
                           "stages_ms_per_img": {"read": 0.1, "decode": 0.8,
                                                 "augment": 0.4, "wait": 0.5}},
            "waited_fraction": waited}


def test_advice_names_the_limit():
    assert "pass --consumer-ms" in measure.advice(_summary(900, 0.9), 0, 64, 2)
    hidden = measure.advice(_summary(900, 0.01), 200, 64, 2)
    assert hidden.startswith("loading is hidden behind compute")
    limit = measure.advice(_summary(900, 0.4), 20, 64, 1)
    assert limit.startswith("the loader is the limit") and "decode is the largest stage" in limit


def test_native_pil_names_pillow_simd_when_installed(monkeypatch):
    import PIL
    real = metadata.version

    def version(name):
        if name == "pillow-simd":
            return PIL.__version__ + ".post0"
        if name == "Pillow":
            raise metadata.PackageNotFoundError(name)
        return real(name)
    monkeypatch.setattr(metadata, "version", version)
    pil = measure.native_pil()
    assert pil["distribution"] == "pillow-simd"
    results = {"train": {2: {**_summary(900, 0.3), "ratio": 2.0, "advice": "x",
                             "native": {"img_per_s": 450, "cpu_ms_per_img": 4.0,
                                        "first_batch_s": 0.2, "worker_peak_mib": 500}}}}
    results["train"][2]["jpegloader"].update(cpu_ms_per_img=2.0, first_batch_s=0.1,
                                             worker_peak_mib=480)
    assert "PIL from pillow-simd" in report.table(results, pil)


JPEG_LIMIT = bench_ceiling.SOURCE  # shipped with the package


def test_ceiling_is_measured_on_the_same_files(small_folder, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # built afresh
    out = tmp_path / "r.json"
    # --ceiling with no value: the jpeg_limit.c the package ships
    args = ["--data", small_folder, "--pipeline", "train,eval", "--workers", "2", "--epochs",
            "2", "--warmup", "1", "--batch-size", "4", "--no-memory", "--json", out,
            "--ceiling"]
    assert cli.main([str(a) for a in args]) == 0
    text = capsys.readouterr().out
    results = json.loads(out.read_text())["results"]
    for pipeline, mode in (("train", "roi2"), ("eval", "ctr2")):
        r = results[pipeline]["2"]
        c = r["ceiling"]
        assert c["mode"] == mode and c["processes"] == 2 and c["files"] == 24
        assert c["img_per_s"] > 0 and c["cpu_us_per_img"] > 0
        # one pass in each measured round of epochs (not the warm-up), their median quoted
        rounds = c["img_per_s_per_round"]
        assert len(rounds) == 2 and c["img_per_s"] == pytest.approx(sum(rounds) / 2)
        for name in ("native", "jpegloader"):
            assert r[name]["of_ceiling"] == pytest.approx(r[name]["img_per_s"] / c["img_per_s"])
            assert "pss_mib" not in r[name]
        epochs = r["jpegloader"]["epochs"]
        assert r["of_ceiling_per_round"] == pytest.approx(
            [e["img_per_s"] / x for e, x in zip(epochs, rounds)])
        assert f"ceiling {pipeline} workers=2: libjpeg-turbo alone (jpeg_limit {mode}" in text
        assert text.count(f"{pipeline:7s} workers=2 epoch") == 3 * 2 + 2  # 2 loaders, 2 ceilings


def test_each_ceiling_process_reads_every_file_in_its_own_shuffled_order(tmp_path,
                                                                         monkeypatch):
    """NOTE [ The ceiling reads the files shuffled ]: a stand-in for jpeg_limit keeps
    the list each process was given."""

    program = tmp_path / "fake_limit"
    program.write_text(f"#!{sys.executable}\n"
                       "import os, sys, tempfile\n"
                       "fd, _ = tempfile.mkstemp(dir=os.environ['LISTS'])\n"
                       "os.write(fd, sys.stdin.read().encode())\n"
                       "print(sys.argv[-1], 100.0, 90.0, 110.0, 500.0)\n")
    program.chmod(0o755)
    files = [f"/data/c{k // 6}/r{k % 6}_image{k // 6}.JPEG" for k in range(60)]

    def orders(seed: int, run: str) -> set[tuple[str, ...]]:
        lists = tmp_path / run
        lists.mkdir()
        monkeypatch.setenv("LISTS", str(lists))
        result = bench_ceiling.measure(program, files, "ctr2", processes=2, passes=1, seed=seed)
        assert result["img_per_s"] == 200.0 and result["cpu_us_per_img"] == 500.0
        read = [tuple(f.read_text().split()) for f in lists.iterdir()]
        assert len(read) == 2
        assert all(sorted(order) == sorted(files) for order in read)  # every file once
        return set(read)

    first = orders(3, "first")
    assert len(first) == 2 and tuple(files) not in first  # each process its own order
    assert orders(3, "again") == first  # reproducible from the seed
    assert orders(4, "next") != first


def test_ceiling_option_errors(tmp_path, capsys):
    assert _exit_status("--ceiling", tmp_path / "missing.c") == 2
    broken = tmp_path / "broken.c"
    broken.write_text("this is not C")
    capsys.readouterr()
    assert _exit_status("--ceiling", broken) == 2
    assert "could not build" in capsys.readouterr().err


def test_a_native_epoch_does_not_wait_for_jpegloaders_kept_workers(small_folder,
                                                                   monkeypatch):
    """Workers jpegloader keeps between epochs are not waited for after the native
    epoch alternated with it (that wait ran into its 10 s timeout every time)."""
    import torch
    import torchvision.transforms as T
    from torchvision import datasets

    import jpegloader
    ds = datasets.ImageFolder(str(small_folder), T.Compose([T.Resize(32), T.CenterCrop(32),
                                                            T.ToTensor()]))
    ours = jpegloader.DataLoader(ds, batch_size=4, num_workers=2)
    native = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2)
    waits = []
    wait = measure._wait_for_children_to_exit
    monkeypatch.setattr(measure, "_wait_for_children_to_exit",
                        lambda timeout, keep=(): waits.append(set(keep)) or wait(timeout, keep))
    measure.run_epoch(ours, others=[native])
    kept = {w.pid for w in ours._workers()}
    assert kept  # NOTE [ Workers kept between epochs ]
    measure.run_epoch(native, others=[ours])
    assert waits == [kept, kept]
    ours.close()


@pytest.mark.parametrize("source, needs", [("webdataset", "webdataset"), ("hf", "datasets")])
def test_sources_made_from_the_same_files(small_folder, tmp_path, capsys, source, needs):
    """--source: the dataset's files as tar shards or an Arrow dataset; torch's loader
    runs what users run today for that source, jpegloader its dataset, both over every
    image once per epoch."""
    pytest.importorskip(needs, reason=f"{needs} is a test dependency (the [test] extra)")
    out = tmp_path / "r.json"
    args = ["--data", small_folder, "--source", source, "--pipeline", "eval", "--workers", "0",
            "--epochs", "1", "--warmup", "0", "--batch-size", "4", "--json", out]
    assert cli.main([str(a) for a in args]) == 0
    assert f"source: {source}" in capsys.readouterr().out
    r = json.loads(out.read_text())["results"]["eval"]["0"]
    for name in ("native", "jpegloader"):
        assert r[name]["epochs"][0]["images"] == 24
        assert "pss_mib" not in r[name]  # memory is measured for folders only
    assert _cli("--source", source, "--pipeline", "ssd").returncode == 2


def test_plots_draw_every_pipeline_with_and_without_a_ceiling(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is a test dependency")
    from jpegloader.bench.plots import NAMES, plot

    def result(workers, torch_rate, ours_rate, ceiling=None):
        r = {**_summary(ours_rate, 0.1), "ratio": ours_rate / torch_rate,
             "ratio_per_epoch_pair": [ours_rate / torch_rate * f for f in (0.9, 1.1)],
             "native": {"img_per_s": torch_rate}}
        if ceiling:
            r["ceiling"] = {"img_per_s": ceiling}
        return workers, r

    results = {"train": dict(result(w, 300 * w + 200, 1000 * w + 500, 1200 * w + 600)
                             for w in (0, 1, 2)),
               "eval": dict([result(2, 600, 2100)]),
               "det-hflip": dict([result(2, 200, 600)]),
               "maskrcnn": dict([result(2, 150, 500)])}
    paths = plot(results, tmp_path / "new")  # made when missing
    assert [p.name for p in paths] == list(NAMES)
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


@pytest.mark.integration  # whole recipes, memory in new processes
def test_yolo_recipes_run_ultralytics_loaders(tmp_path, capsys, monkeypatch):
    """--pipeline yolo-val,yolo-train,yolo-train-rect: coco-sample written as a YOLO set
    (in the cache), the datasets yolo val and yolo train build, val's and rect
    training's loaders in the dataset's order (their rect batches), the memory run in a
    new process, the ceiling's full decode on the same files."""
    pytest.importorskip("ultralytics", reason="the yolo recipes run Ultralytics' datasets")
    coco = shared("coco-sample")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "r.json"
    args = ["--data", coco, "--pipeline", "yolo-val,yolo-train,yolo-train-rect", "--files", "24",
            "--workers",
            "0", "--epochs", "1", "--warmup", "0", "--batch-size", "8", "--memory-runs", "1",
            "--ceiling", "--json", out]
    assert cli.main([str(a) for a in args]) == 0
    text = capsys.readouterr().out
    from jpegloader.pipelines.yolo.opencv import opencv_match
    assert "native: decode, LetterBox" in text
    # native where the self-check found a C copy of the installed OpenCV's warp
    assert ("RandomPerspective warp" in text) == (opencv_match().warp is not None)
    for recipe in ("yolo-val", "yolo-train", "yolo-train-rect"):
        r = json.loads(out.read_text())["results"][recipe]["0"]
        assert r["native"]["epochs"][0]["images"] == r["jpegloader"]["epochs"][0]["images"] == 24
        assert r["jpegloader"]["pss_mib"] > 0 and r["ceiling"]["mode"] == "full"
    assert list((tmp_path / "cache" / "jpegloader").glob("yolo-*/labels/val/*.txt"))


@pytest.mark.integration  # whole recipes
def test_yolo_classify_recipes_run_ultralytics_classification_dataset(tmp_path, capsys):
    """--pipeline yolo-classify,yolo-classify-val: Ultralytics' ClassificationDataset
    over the image folder, both loaders; ours accelerated, RandAugment and
    RandomErasing yours."""
    pytest.importorskip("ultralytics", reason="the yolo recipes run Ultralytics' datasets")
    out = tmp_path / "r.json"
    args = ["--data", shared("imagenet-sample"), "--pipeline", "yolo-classify,yolo-classify-val",
            "--files", "24", "--workers", "0", "--epochs", "1", "--warmup", "0",
            "--batch-size", "8", "--no-memory", "--json", out]
    assert cli.main([str(a) for a in args]) == 0
    text = capsys.readouterr().out
    assert "yours: RandAugment" in text and "native: decode, Resize" in text
    for recipe in ("yolo-classify", "yolo-classify-val"):
        r = json.loads(out.read_text())["results"][recipe]["0"]
        assert r["native"]["epochs"][0]["images"] == r["jpegloader"]["epochs"][0]["images"] == 24


def test_the_yolo_ram_cache_recipe_reports_its_cache(tmp_path, capsys, monkeypatch):
    """--pipeline yolo-train-ram: both loaders over a dataset built with cache="ram";
    the cache's size and the time the dataset took to build go in the results (the
    loaders' memory leaves it out: it is the dataset's)."""
    pytest.importorskip("ultralytics", reason="the yolo recipes run Ultralytics' datasets")
    coco = shared("coco-sample")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "r.json"
    args = ["--data", coco, "--pipeline", "yolo-train-ram", "--files", "16", "--workers",
            "0", "--epochs", "1", "--warmup", "0", "--batch-size", "8", "--no-memory",
            "--json", out]
    assert cli.main([str(a) for a in args]) == 0
    assert "the dataset's cache holds" in capsys.readouterr().out
    r = json.loads(out.read_text())["results"]["yolo-train-ram"]["0"]
    assert r["native"]["epochs"][0]["images"] == r["jpegloader"]["epochs"][0]["images"] == 16
    from jpegloader.bench.recipes import build_dataset
    dataset, _ = build_dataset("yolo-train-ram", (coco / "val2017",
                                                  coco / "annotations" / "instances_val2017.json"))
    assert dataset.cache == "ram" and all(im is not None for im in dataset.ims)
    assert r["dataset_ram_cache"]["mib"] > 0 and r["dataset_ram_cache"]["dataset_built_s"] > 0


def test_the_yolo_disk_cache_recipe_writes_its_npy_files_into_a_set_of_its_own(
        tmp_path, monkeypatch):
    """--pipeline yolo-train-disk: the dataset writes a .npy beside each photo; they go
    into a YOLO set of its own, so that yolo-train (and every other recipe) still reads
    the JPEGs, and no file is written beside the corpus's photos."""
    pytest.importorskip("ultralytics", reason="the yolo recipes run Ultralytics' datasets")
    from jpegloader.bench.recipes import build_dataset
    coco = shared("coco-sample")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = (coco / "val2017", coco / "annotations" / "instances_val2017.json")
    disk, _ = build_dataset("yolo-train-disk", root, batch_size=8)
    plain, _ = build_dataset("yolo-train", root, batch_size=8)
    assert disk.cache == "disk" and plain.cache is None
    assert all(f.exists() for f in disk.npy_files)
    assert not any(f.exists() for f in plain.npy_files)
    assert not list((coco / "val2017").glob("*.npy"))
