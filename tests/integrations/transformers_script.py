"""A transformers Trainer script as users write one for image classification: an
ImageFolder, a collator giving pixel_values and labels, a model; what the model saw in
training goes to OUT/{LABEL}-rank{R}.json with what the Trainer's loader was.

    torchrun --nproc_per_node=2 transformers_script.py IMAGE_FOLDER OUT LABEL
"""
import json
import os
import sys

import torch
from torchvision import datasets, transforms as T
from transformers import Trainer, TrainingArguments

ROOT, OUT, LABEL = sys.argv[1:4]


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 2)
        self.seen = []

    def forward(self, pixel_values, labels):
        self.seen.append([labels.tolist(), float(pixel_values.double().sum())])
        logits = self.fc(pixel_values.mean(dim=(2, 3)))
        return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}


def collate(batch):
    return {"pixel_values": torch.stack([x for x, _ in batch]),
            "labels": torch.tensor([y for _, y in batch])}


ds = datasets.ImageFolder(ROOT, T.Compose([T.Resize(64), T.CenterCrop(56), T.ToTensor()]))
args = TrainingArguments(output_dir=os.path.join(OUT, "hf-" + LABEL), use_cpu=True, seed=0,
                         per_device_train_batch_size=4, num_train_epochs=2,
                         dataloader_num_workers=1, report_to=[], save_strategy="no",
                         logging_strategy="no", remove_unused_columns=False,
                         disable_tqdm=True)
model = Tiny()
trainer = Trainer(model=model, args=args, train_dataset=ds, data_collator=collate)
trainer.train()
loader = trainer.get_train_dataloader()
base = getattr(loader, "base_dataloader", loader)
verdict = getattr(base, "eligibility", None)
with open(os.path.join(OUT, f"{LABEL}-rank{trainer.args.process_index}.json"), "w") as f:
    json.dump([[type(base).__module__, bool(verdict is not None and verdict.accelerated),
                getattr(base, "decode", None)], *model.seen], f)
