"""A Lightning training script as users write one: the module builds its loaders in
train_dataloader() and friends (jpegloader imported there, or torch's loader under
``python -m jpegloader run``); each rank writes what its loader was and the batches it
saw to OUT/{MODE}-rank{R}.json.

    python lightning_script.py IMAGE_FOLDER OUT STRATEGY fit|predict jpegloader|torch
"""
import json, os, sys
import torch
import lightning as L
from torchvision import datasets, transforms as T

ROOT, OUT, STRATEGY, MODE, LOADER = sys.argv[1:6]


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(3, 2)
        self.seen = []

    def _record(self, batch, stage):
        images, labels = batch
        self.seen.append([stage, labels.tolist(), float(images.double().sum())])

    def training_step(self, batch, i):
        self._record(batch, "fit")
        return self.layer(batch[0].mean(dim=(2, 3))).sum()

    def validation_step(self, batch, i):
        self._record(batch, "validate")

    def predict_step(self, batch, i):
        self._record(batch, "predict")

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def _loader(self):
        ds = datasets.ImageFolder(ROOT, T.Compose([T.Resize(64), T.CenterCrop(56), T.ToTensor()]))
        if LOADER == "jpegloader":
            import jpegloader  # imported here, as in a train_dataloader() users write
            return jpegloader.DataLoader(ds, batch_size=4, num_workers=1, decode="exact")
        return torch.utils.data.DataLoader(ds, batch_size=4, num_workers=1)

    def train_dataloader(self):
        return self._loader()

    def val_dataloader(self):
        return self._loader()

    def predict_dataloader(self):
        return self._loader()

    def on_train_start(self):
        self._describe(self.trainer.train_dataloader)

    def on_predict_start(self):
        self._describe(self.trainer.predict_dataloaders)

    def _describe(self, loader):
        if isinstance(loader, (list, tuple)):
            loader = loader[0]
        v = getattr(loader, "eligibility", None)
        self.seen.append(["loader", type(loader).__module__, v is not None and v.accelerated,
                          getattr(loader, "decode", None),
                          type(getattr(loader, "sampler", None)).__name__])

    def on_train_end(self):
        self._dump()

    def on_predict_end(self):
        self._dump()

    def _dump(self):
        with open(os.path.join(OUT, f"{MODE}-rank{self.global_rank}.json"), "w") as f:
            json.dump(self.seen, f)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy=STRATEGY, max_epochs=1,
                        limit_train_batches=3, limit_val_batches=2, limit_predict_batches=2,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, num_sanity_val_steps=0)
    model = Model()
    if MODE == "fit":
        trainer.fit(model)
    else:
        trainer.predict(model)
