"""Transforms the package ships for users: the SSD-300 reference pipeline
(``jpegloader.transforms.ssd``)."""
