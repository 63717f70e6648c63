# ruff: noqa  -- deliberately in the style of the reference code users carry
"""The SSD reference data classes as a user's training script carries them
(written out independently here, in the reference's style: Python ``random``
for the crop and flip, in-place box edits, the reference's own loops).  The
loader must recognise these by name and structure, and the parity tests use
them as the native pipeline."""
import itertools
import json
import os
import random
from math import sqrt

import numpy as np
import torch
from PIL import Image
from torch.utils import data
from torchvision import transforms


def calc_iou_tensor(box1, box2):
    N, M = box1.size(0), box2.size(0)
    be1 = box1.unsqueeze(1).expand(-1, M, -1)
    be2 = box2.unsqueeze(0).expand(N, -1, -1)
    lt = torch.max(be1[:, :, :2], be2[:, :, :2])
    rb = torch.min(be1[:, :, 2:], be2[:, :, 2:])
    delta = rb - lt
    delta[delta < 0] = 0
    intersect = delta[:, :, 0] * delta[:, :, 1]
    delta1 = be1[:, :, 2:] - be1[:, :, :2]
    area1 = delta1[:, :, 0] * delta1[:, :, 1]
    delta2 = be2[:, :, 2:] - be2[:, :, :2]
    area2 = delta2[:, :, 0] * delta2[:, :, 1]
    return intersect / (area1 + area2 - intersect)


class Encoder:
    def __init__(self, dboxes):
        self.dboxes = dboxes(order="ltrb")
        self.dboxes_xywh = dboxes(order="xywh").unsqueeze(dim=0)
        self.nboxes = self.dboxes.size(0)
        self.scale_xy = dboxes.scale_xy
        self.scale_wh = dboxes.scale_wh

    def encode(self, bboxes_in, labels_in, criteria=0.5):
        ious = calc_iou_tensor(bboxes_in, self.dboxes)
        best_dbox_ious, best_dbox_idx = ious.max(dim=0)
        best_bbox_ious, best_bbox_idx = ious.max(dim=1)
        best_dbox_ious.index_fill_(0, best_bbox_idx, 2.0)
        idx = torch.arange(0, best_bbox_idx.size(0), dtype=torch.int64)
        best_dbox_idx[best_bbox_idx[idx]] = idx
        masks = best_dbox_ious > criteria
        labels_out = torch.zeros(self.nboxes, dtype=torch.long)
        labels_out[masks] = labels_in[best_dbox_idx[masks]]
        bboxes_out = self.dboxes.clone()
        bboxes_out[masks, :] = bboxes_in[best_dbox_idx[masks], :]
        x = 0.5 * (bboxes_out[:, 0] + bboxes_out[:, 2])
        y = 0.5 * (bboxes_out[:, 1] + bboxes_out[:, 3])
        w = -bboxes_out[:, 0] + bboxes_out[:, 2]
        h = -bboxes_out[:, 1] + bboxes_out[:, 3]
        bboxes_out[:, 0], bboxes_out[:, 1], bboxes_out[:, 2], bboxes_out[:, 3] = x, y, w, h
        return bboxes_out, labels_out


class DefaultBoxes:
    def __init__(self, fig_size, feat_size, steps, scales, aspect_ratios, scale_xy=0.1,
                 scale_wh=0.2):
        self.feat_size, self.fig_size = feat_size, fig_size
        self.scale_xy_, self.scale_wh_ = scale_xy, scale_wh
        self.steps, self.scales, self.aspect_ratios = steps, scales, aspect_ratios
        fk = fig_size / np.array(steps)
        self.default_boxes = []
        for idx, sfeat in enumerate(self.feat_size):
            sk1 = scales[idx] / fig_size
            sk2 = scales[idx + 1] / fig_size
            sk3 = sqrt(sk1 * sk2)
            all_sizes = [(sk1, sk1), (sk3, sk3)]
            for alpha in aspect_ratios[idx]:
                w, h = sk1 * sqrt(alpha), sk1 / sqrt(alpha)
                all_sizes.append((w, h))
                all_sizes.append((h, w))
            for w, h in all_sizes:
                for i, j in itertools.product(range(sfeat), repeat=2):
                    cx, cy = (j + 0.5) / fk[idx], (i + 0.5) / fk[idx]
                    self.default_boxes.append((cx, cy, w, h))
        self.dboxes = torch.tensor(self.default_boxes, dtype=torch.float)
        self.dboxes.clamp_(min=0, max=1)
        self.dboxes_ltrb = self.dboxes.clone()
        self.dboxes_ltrb[:, 0] = self.dboxes[:, 0] - 0.5 * self.dboxes[:, 2]
        self.dboxes_ltrb[:, 1] = self.dboxes[:, 1] - 0.5 * self.dboxes[:, 3]
        self.dboxes_ltrb[:, 2] = self.dboxes[:, 0] + 0.5 * self.dboxes[:, 2]
        self.dboxes_ltrb[:, 3] = self.dboxes[:, 1] + 0.5 * self.dboxes[:, 3]

    @property
    def scale_xy(self):
        return self.scale_xy_

    @property
    def scale_wh(self):
        return self.scale_wh_

    def __call__(self, order="ltrb"):
        return self.dboxes_ltrb if order == "ltrb" else self.dboxes


def dboxes300_coco():
    return DefaultBoxes(300, [38, 19, 10, 5, 3, 1], [8, 16, 32, 64, 100, 300],
                        [21, 45, 99, 153, 207, 261, 315],
                        [[2], [2, 3], [2, 3], [2, 3], [2], [2]])


class SSDCropping:
    def __init__(self):
        self.sample_options = (None, (0.1, None), (0.3, None), (0.5, None), (0.7, None),
                               (0.9, None), (None, None))
        self.num_cropping_iterations = 1

    def __call__(self, img, img_size, bboxes, labels):
        while True:
            mode = random.choice(self.sample_options)
            if mode is None:
                return img, img_size, bboxes, labels
            htot, wtot = img_size
            min_iou, max_iou = mode
            min_iou = float("-inf") if min_iou is None else min_iou
            max_iou = float("+inf") if max_iou is None else max_iou
            for _ in range(self.num_cropping_iterations):
                w = random.uniform(0.3, 1.0)
                h = random.uniform(0.3, 1.0)
                if w / h < 0.5 or w / h > 2:
                    continue
                left = random.uniform(0, 1.0 - w)
                top = random.uniform(0, 1.0 - h)
                right, bottom = left + w, top + h
                ious = calc_iou_tensor(bboxes, torch.tensor([[left, top, right, bottom]]))
                if not ((ious > min_iou) & (ious < max_iou)).all():
                    continue
                xc = 0.5 * (bboxes[:, 0] + bboxes[:, 2])
                yc = 0.5 * (bboxes[:, 1] + bboxes[:, 3])
                masks = (xc > left) & (xc < right) & (yc > top) & (yc < bottom)
                if not masks.any():
                    continue
                bboxes[bboxes[:, 0] < left, 0] = left
                bboxes[bboxes[:, 1] < top, 1] = top
                bboxes[bboxes[:, 2] > right, 2] = right
                bboxes[bboxes[:, 3] > bottom, 3] = bottom
                bboxes = bboxes[masks, :]
                labels = labels[masks]
                left_idx, top_idx = int(left * wtot), int(top * htot)
                right_idx, bottom_idx = int(right * wtot), int(bottom * htot)
                img = img.crop((left_idx, top_idx, right_idx, bottom_idx))
                bboxes[:, 0] = (bboxes[:, 0] - left) / w
                bboxes[:, 1] = (bboxes[:, 1] - top) / h
                bboxes[:, 2] = (bboxes[:, 2] - left) / w
                bboxes[:, 3] = (bboxes[:, 3] - top) / h
                return img, (bottom_idx - top_idx, right_idx - left_idx), bboxes, labels


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, image, bboxes):
        if random.random() < self.p:
            bboxes[:, 0], bboxes[:, 2] = 1.0 - bboxes[:, 2], 1.0 - bboxes[:, 0]
            return image.transpose(Image.FLIP_LEFT_RIGHT), bboxes
        return image, bboxes


class SSDTransformer:
    def __init__(self, dboxes, size=(300, 300), val=False):
        self.size = size
        self.val = val
        self.dboxes_ = dboxes
        self.encoder = Encoder(self.dboxes_)
        self.crop = SSDCropping()
        self.img_trans = transforms.Compose([
            transforms.Resize(self.size),
            transforms.ColorJitter(brightness=0.125, contrast=0.5, saturation=0.5, hue=0.05),
            transforms.ToTensor()])
        self.hflip = RandomHorizontalFlip()
        self.normalize = transforms.Normalize(mean=[0.485, 0.456, 0.406],
                                              std=[0.229, 0.224, 0.225])
        self.trans_val = transforms.Compose([transforms.Resize(self.size),
                                             transforms.ToTensor(), self.normalize])

    @property
    def dboxes(self):
        return self.dboxes_

    def __call__(self, img, img_size, bbox=None, label=None, max_num=200):
        if self.val:
            bbox_out = torch.zeros(max_num, 4)
            label_out = torch.zeros(max_num, dtype=torch.long)
            bbox_out[:bbox.size(0), :] = bbox
            label_out[:label.size(0)] = label
            return self.trans_val(img), img_size, bbox_out, label_out
        img, img_size, bbox, label = self.crop(img, img_size, bbox, label)
        img, bbox = self.hflip(img, bbox)
        img = self.img_trans(img).contiguous()
        img = self.normalize(img)
        bbox, label = self.encoder.encode(bbox, label)
        return img, img_size, bbox, label


class COCODetection(data.Dataset):
    def __init__(self, img_folder, annotate_file, transform=None):
        self.img_folder = img_folder
        self.annotate_file = annotate_file
        with open(annotate_file) as fin:
            self.data = json.load(fin)
        self.images = {}
        self.label_map = {}
        self.label_info = {}
        cnt = 0
        self.label_info[cnt] = "background"
        for cat in self.data["categories"]:
            cnt += 1
            self.label_map[cat["id"]] = cnt
            self.label_info[cnt] = cat["name"]
        for img in self.data["images"]:
            self.images[img["id"]] = (img["file_name"], (img["height"], img["width"]), [])
        for bboxes in self.data["annotations"]:
            self.images[bboxes["image_id"]][2].append(
                (bboxes["bbox"], self.label_map[bboxes["category_id"]]))
        for k, v in list(self.images.items()):
            if len(v[2]) == 0:
                self.images.pop(k)
        self.img_keys = list(self.images.keys())
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        img_id = self.img_keys[idx]
        img_data = self.images[img_id]
        img = Image.open(os.path.join(self.img_folder, img_data[0])).convert("RGB")
        htot, wtot = img_data[1]
        bbox_sizes, bbox_labels = [], []
        for (l, t, w, h), bbox_label in img_data[2]:
            bbox_sizes.append((l / wtot, t / htot, (l + w) / wtot, (t + h) / htot))
            bbox_labels.append(bbox_label)
        bbox_sizes = torch.tensor(bbox_sizes)
        bbox_labels = torch.tensor(bbox_labels)
        if self.transform is not None:
            img, (htot, wtot), bbox_sizes, bbox_labels = self.transform(
                img, (htot, wtot), bbox_sizes, bbox_labels)
        return img, img_id, (htot, wtot), bbox_sizes, bbox_labels
