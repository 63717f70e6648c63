"""A Ray Train script as users write one: TorchTrainer with 2 CPU workers, each building
its jpegloader.DataLoader in the training function and preparing it (jpegloader's
adapter, or Ray's own prepare_data_loader); what each worker saw over two epochs goes to
OUT/{HOW}-rank{R}.json.

    python ray_script.py IMAGE_FOLDER OUT adapter|plain
"""
import json
import os
import sys

import ray
from ray import train
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchTrainer
from torchvision import datasets, transforms as T


def loop(config):
    ds = datasets.ImageFolder(config["root"], T.Compose([T.Resize(64), T.CenterCrop(56),
                                                         T.ToTensor()]))
    how = config["how"]
    import jpegloader
    from jpegloader.integrations import ray as jl_ray
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=1, shuffle=True,
                                   decode="exact", persistent_workers=True)
    prepare = jl_ray.prepare_data_loader if how == "adapter" else train.torch.prepare_data_loader
    loader = prepare(loader)
    inner = getattr(loader, "_dataloader", loader)
    verdict = getattr(inner, "eligibility", None)
    seen = [[type(inner).__module__, bool(verdict is not None and verdict.accelerated),
             getattr(inner, "decode", None), getattr(inner, "persistent_workers", None)]]
    for epoch in range(2):
        loader.sampler.set_epoch(epoch)
        for images, labels in loader:
            seen.append([labels.tolist(), float(images.double().sum())])
    rank = train.get_context().get_world_rank()
    with open(os.path.join(config["out"], f"{how}-rank{rank}.json"), "w") as f:
        json.dump(seen, f)


if __name__ == "__main__":
    root, out, how = sys.argv[1:4]
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    TorchTrainer(loop, train_loop_config={"root": root, "out": out, "how": how},
                 scaling_config=ScalingConfig(num_workers=2, use_gpu=False),
                 run_config=RunConfig(storage_path=os.path.join(out, "ray"), name=how)).fit()
