"""Checkpoint and resume (NOTE [ Resuming bit-identically ]): a run interrupted at
any point of an epoch and resumed in a new loader, with another global RNG, another
num_workers, or in a new process, gives the same batches, bit for bit, for the rest
of that epoch and the following ones."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from tests.conftest import REPO
from tests.dataloader.resume_cases import EPOCHS, build, epoch_batches, resume_and_run


def uninterrupted(case, root, workers, fallback=False):
    torch.manual_seed(100)
    loader, sampler = build(case, root, workers, fallback)
    return [b for e in range(EPOCHS) for b in epoch_batches(loader, sampler, e)[0]]


def interrupted(case, root, workers, stop_epoch, stop, fallback=False):
    """(batches before the checkpoint, the state, JSON round-tripped)."""
    torch.manual_seed(100)
    loader, sampler = build(case, root, workers, fallback)
    seen = []
    for e in range(stop_epoch):
        seen += epoch_batches(loader, sampler, e)[0]
    batches, state = epoch_batches(loader, sampler, stop_epoch, stop)
    del loader
    return seen + batches, json.loads(json.dumps(state))


def _same(a, b):
    assert len(a) == len(b), (len(a), len(b))
    for x, y in zip(a, b, strict=True):
        assert all(torch.equal(p, q) for p, q in zip(x, y, strict=True))


@pytest.mark.parametrize("case", ["shuffle", "generator", "sampler", "batch_sampler",
                                  "distributed", "persistent"])
@pytest.mark.parametrize("stop_epoch, stop", [(0, 0), (0, 1), (1, 3), (1, 4), (0, 5)])
def test_resumed_equals_uninterrupted(small_folder, case, stop_epoch, stop):
    full = uninterrupted(case, str(small_folder), workers=2)
    before, state = interrupted(case, str(small_folder), 2, stop_epoch, stop)
    after = resume_and_run(case, str(small_folder), 1 if stop % 2 else 0, state)
    _same(before + after, full)


def test_mid_prefetch_with_workers_busy_and_a_different_num_workers(small_folder):
    # Batch 1 is handed over while the workers have the next ones in flight.
    full = uninterrupted("shuffle", str(small_folder), workers=2)
    before, state = interrupted("shuffle", str(small_folder), 2, 0, 1)
    assert state["batches_yielded"] == 1
    _same(before + resume_and_run("shuffle", str(small_folder), 0, state), full)


def test_resumed_in_a_new_process(small_folder, tmp_path):
    full = uninterrupted("generator", str(small_folder), workers=2)
    before, state = interrupted("generator", str(small_folder), 2, 1, 2)
    (tmp_path / "state.json").write_text(json.dumps(state))
    subprocess.run([sys.executable, "-m", "tests.dataloader.resume_child", "generator",
                    str(small_folder), str(tmp_path / "state.json"), str(tmp_path / "out.pt")],
                   cwd=REPO, check=True, timeout=300)
    _same(before + torch.load(tmp_path / "out.pt"), full)


def test_state_is_small_and_json(small_folder):
    loader, _ = build("shuffle", str(small_folder), 0)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    text = json.dumps(state)
    assert len(text) < 16_000, len(text)  # two 5 KB RNG states, in base64
    assert state["epoch"] == 0 and state["batches_yielded"] == 1 and state["accelerated"]
    before_any = build("generator", str(small_folder), 0)[0].state_dict()
    assert before_any["epoch"] == 0 and before_any["rng_at_epoch_start"] is None


def test_fallback_restores_the_order(small_folder, caplog):
    # torch's loader (GaussianBlur does not lower), deterministic transforms: the
    # batches themselves are equal.
    full = uninterrupted("shuffle", str(small_folder), 2, fallback=True)
    before, state = interrupted("shuffle", str(small_folder), 2, 1, 2, fallback=True)
    assert not state["accelerated"]
    with caplog.at_level("WARNING", logger="jpegloader"):
        after = resume_and_run("shuffle", str(small_folder), 0, state, fallback=True)
    _same(before + after, full)
    assert "random augmentations run in torch's workers are not" in caplog.text


@pytest.mark.parametrize("stop", [0, 2, 99])  # right after iter(), mid-epoch, at its end
@pytest.mark.parametrize("resume_workers", [2, 0])
def test_fallback_with_persistent_workers_restores_the_order(small_folder, stop,
                                                              resume_workers):
    # NOTE [ A persistent iterator draws no base seed ]: from the second epoch on, the
    # saved run's iterator was reset without a base seed draw; the resumed one is new.
    full = uninterrupted("persistent", str(small_folder), 2, fallback=True)
    before, state = interrupted("persistent", str(small_folder), 2, 1, stop, fallback=True)
    assert not state["accelerated"] and state["base_seed_kept"]
    after = resume_and_run("persistent", str(small_folder), resume_workers, state,
                           fallback=True)
    _same(before + after, full)


def test_a_state_from_another_configuration_is_refused(small_folder):
    _, state = interrupted("generator", str(small_folder), 0, 0, 2)
    loader, _ = build("shuffle", str(small_folder), 0)
    with pytest.raises(ValueError, match="generator"):
        loader.load_state_dict(state)
    with pytest.raises(ValueError, match="not a jpegloader DataLoader state"):
        loader.load_state_dict({"epoch": 3})


class _KeepsRng(torch.utils.data.Dataset):
    """A dataset with a state of its own (torch's RNG, drawn per item)."""

    def __len__(self):
        return 30

    def __getitem__(self, i):
        return i * 1000 + int(torch.randint(1000, ()))

    def state_dict(self):
        return {"g": torch.get_rng_state().tolist()}

    def load_state_dict(self, state):
        torch.set_rng_state(torch.tensor(state["g"], dtype=torch.uint8))


def test_without_torchdata_a_datasets_own_state_is_said_to_be_unsaved(monkeypatch, caplog):
    # NOTE [ A dataset's own state on the fallback ]: no StatefulDataLoader to hand it to
    import jpegloader
    from jpegloader.dataloader import loader as loader_module
    monkeypatch.setattr(loader_module, "stateful_loader_class", lambda ours: None)
    dl = jpegloader.DataLoader(_KeepsRng(), batch_size=5, shuffle=True,
                               generator=torch.Generator().manual_seed(3))
    it = iter(dl)
    next(it)
    with caplog.at_level("WARNING", logger="jpegloader"):
        state = dl.state_dict()
        dl.state_dict()
    said = [r for r in caplog.records if "keeps a state of its own" in r.getMessage()]
    assert len(said) == 1 and "pip install torchdata" in said[0].getMessage()
    assert "fallback" not in state  # jpegloader's own state: the order is restored
    with pytest.raises(ValueError, match="torchdata is not installed"):
        dl.load_state_dict({"version": 1, "fallback": "torchdata", "state": {}})


def test_with_torchdata_a_datasets_own_state_is_saved_and_restored():
    pytest.importorskip("torchdata.stateful_dataloader")
    import jpegloader

    def loader():
        return jpegloader.DataLoader(_KeepsRng(), batch_size=5, num_workers=2, shuffle=True,
                                     generator=torch.Generator().manual_seed(3))
    dl = loader()
    it = iter(dl)
    next(it), next(it)
    state = dl.state_dict()  # torchdata's, wrapped (its generator state is a tensor)
    assert state["fallback"] == "torchdata"
    want = [b.tolist() for b in it]
    resumed = loader()
    resumed.load_state_dict(state)
    assert [b.tolist() for b in resumed] == want


def test_without_torchdata_a_plain_iterable_dataset_is_not_said_to_keep_state(monkeypatch,
                                                                              caplog):
    import jpegloader
    from jpegloader.dataloader import loader as loader_module
    monkeypatch.setattr(loader_module, "stateful_loader_class", lambda ours: None)

    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(10))
    dl = jpegloader.DataLoader(Stream(), batch_size=2)
    it = iter(dl)
    next(it)
    with caplog.at_level("WARNING", logger="jpegloader"):
        state = dl.state_dict()
    assert not [r for r in caplog.records if "keeps a state of its own" in r.getMessage()]
    resumed = jpegloader.DataLoader(Stream(), batch_size=2)
    resumed.load_state_dict(state)
    assert [b.tolist() for b in resumed] == [b.tolist() for b in it]
