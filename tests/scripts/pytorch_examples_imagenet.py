"""The loader construction of pytorch/examples' imagenet/main.py (no distributed
run, no dummy data), as that script writes it: ImageFolder train and val with its
transforms, torch.utils.data.DataLoader with shuffle=(train_sampler is None) and
pin_memory=True.  Prints one JSON line per loader.  Usage: SCRIPT DIR [-j N]."""
import argparse
import json
import os

import torch
import torch.utils.data
import torchvision.datasets as datasets
import torchvision.transforms as transforms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("-j", "--workers", default=0, type=int)
    parser.add_argument("-b", "--batch-size", default=4, type=int)
    args = parser.parse_args()
    traindir, valdir = os.path.join(args.data, "train"), os.path.join(args.data, "val")
    normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    train_dataset = datasets.ImageFolder(traindir, transforms.Compose([
        transforms.RandomResizedCrop(64), transforms.RandomHorizontalFlip(),
        transforms.ToTensor(), normalize]))
    val_dataset = datasets.ImageFolder(valdir, transforms.Compose([
        transforms.Resize(72), transforms.CenterCrop(64), transforms.ToTensor(), normalize]))
    train_sampler = None
    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
        num_workers=args.workers, pin_memory=True, sampler=train_sampler)
    val_loader = torch.utils.data.DataLoader(
        val_dataset, batch_size=args.batch_size, shuffle=False, num_workers=args.workers,
        pin_memory=True, sampler=None)
    for name, loader in (("train", train_loader), ("val", val_loader)):
        images, target = next(iter(loader))
        print(json.dumps({"loader": name, "class": f"{type(loader).__module__}."
                          f"{type(loader).__qualname__}", "steps": len(loader),
                          "shape": list(images.shape), "targets": len(target)}))


if __name__ == "__main__":
    main()
