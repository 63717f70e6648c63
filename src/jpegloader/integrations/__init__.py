"""Trainers that take a loader and build another: what keeps jpegloader's in place.

    accelerate.py   Hugging Face Accelerate's prepare()
    ray.py          Ray Train's prepare_data_loader()
"""
