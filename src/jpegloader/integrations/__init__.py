"""Trainers that take a loader and build another: what keeps jpegloader's in place.

    accelerate.py   Hugging Face Accelerate's prepare() (and so transformers' Trainer)
"""
