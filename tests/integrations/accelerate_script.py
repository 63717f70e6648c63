"""An Accelerate script as users write one, run by torchrun with 2 CPU processes: a loader
(torch's, jpegloader's through accelerator.prepare, or through jpegloader's adapter) and
what each process saw over two epochs, in OUT/{LOADER}-rank{R}.json.

    torchrun --nproc_per_node=2 accelerate_script.py IMAGE_FOLDER OUT torch|adapter|plain
"""
import json, os, sys
import torch
from accelerate import Accelerator
from torchvision import datasets, transforms as T

ROOT, OUT, LOADER = sys.argv[1:4]
accelerator = Accelerator(cpu=True)
ds = datasets.ImageFolder(ROOT, T.Compose([T.Resize(64), T.CenterCrop(56), T.ToTensor()]))
def prepare(fn, loader):
    torch.manual_seed(0)  # what Accelerate draws its shuffling from, alike for both loaders
    return fn(loader)


if LOADER == "torch":
    loader = prepare(accelerator.prepare, torch.utils.data.DataLoader(
        ds, batch_size=4, num_workers=1, shuffle=True))
else:
    import jpegloader
    from jpegloader.integrations import accelerate as jl_accelerate
    loader = jpegloader.DataLoader(ds, batch_size=4, num_workers=1, shuffle=True, decode="exact")
    loader = prepare(lambda x: jl_accelerate.prepare(accelerator, x), loader) \
        if LOADER == "adapter" else prepare(accelerator.prepare, loader)
base = loader.base_dataloader
verdict = getattr(base, "eligibility", None)
seen = [[type(base).__module__, bool(verdict is not None and verdict.accelerated),
         getattr(base, "decode", None)]]
for epoch in range(2):
    loader.set_epoch(epoch)
    for images, labels in loader:
        seen.append([labels.tolist(), float(images.double().sum())])
with open(os.path.join(OUT, f"{LOADER}-rank{accelerator.process_index}.json"), "w") as f:
    json.dump(seen, f)
