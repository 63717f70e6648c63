"""The loader construction of torchvision's references/classification/train.py
(its ImageFolder path, default options), reduced to what the interception sees:
presets, samplers, collate_fn and DataLoader calls as that script makes them, and
a `len(data_loader)` before the first epoch (where a global swap once recursed).
Prints one JSON line per loader.  Usage: SCRIPT --data-path DIR [--workers N]."""
import argparse
import json
import os

import torch
import torch.utils.data
import torchvision
from torch.utils.data.dataloader import default_collate
from torchvision.transforms import InterpolationMode
from torchvision.transforms import v2 as T


class ClassificationPresetTrain:
    def __init__(self, crop_size, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225),
                 interpolation=InterpolationMode.BILINEAR, hflip_prob=0.5):
        self.transforms = T.Compose([
            T.RandomResizedCrop(crop_size, interpolation=interpolation, antialias=True),
            T.RandomHorizontalFlip(hflip_prob), T.PILToTensor(),
            T.ToDtype(torch.float, scale=True), T.Normalize(mean=mean, std=std), T.ToPureTensor()])

    def __call__(self, img):
        return self.transforms(img)


class ClassificationPresetEval:
    def __init__(self, crop_size, resize_size=256, mean=(0.485, 0.456, 0.406),
                 std=(0.229, 0.224, 0.225), interpolation=InterpolationMode.BILINEAR):
        self.transforms = T.Compose([
            T.Resize(resize_size, interpolation=interpolation, antialias=True),
            T.CenterCrop(crop_size), T.PILToTensor(), T.ToDtype(torch.float, scale=True),
            T.Normalize(mean=mean, std=std), T.ToPureTensor()])

    def __call__(self, img):
        return self.transforms(img)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-path")
    parser.add_argument("-b", "--batch-size", default=4, type=int)
    parser.add_argument("-j", "--workers", default=0, type=int)
    args = parser.parse_args()
    traindir, valdir = os.path.join(args.data_path, "train"), os.path.join(args.data_path, "val")
    dataset = torchvision.datasets.ImageFolder(traindir, ClassificationPresetTrain(crop_size=64))
    dataset_test = torchvision.datasets.ImageFolder(valdir, ClassificationPresetEval(
        crop_size=64, resize_size=72))
    train_sampler = torch.utils.data.RandomSampler(dataset)
    test_sampler = torch.utils.data.SequentialSampler(dataset_test)
    collate_fn = default_collate  # no mixup or cutmix
    data_loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.batch_size, sampler=train_sampler, num_workers=args.workers,
        pin_memory=True, collate_fn=collate_fn)
    data_loader_test = torch.utils.data.DataLoader(
        dataset_test, batch_size=args.batch_size, sampler=test_sampler,
        num_workers=args.workers, pin_memory=True)
    for name, loader in (("train", data_loader), ("test", data_loader_test)):
        steps = len(loader)
        images, target = next(iter(loader))
        print(json.dumps({"loader": name, "class": f"{type(loader).__module__}."
                          f"{type(loader).__qualname__}", "steps": steps,
                          "shape": list(images.shape), "targets": len(target)}))


if __name__ == "__main__":
    main()
