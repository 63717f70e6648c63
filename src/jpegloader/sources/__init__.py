"""Where a sample's bytes come from, and nothing of what is done with them (that is
pipelines/): loose files read in groups (read_files.py), the compact file table the
workers share (file_table.py), WebDataset tar shards (shards.py), Hugging Face Arrow
files (arrow_images.py), the remote shard cache (remote_cache.py) and the SSD
reference's COCO dataset (coco_ssd.py).  A sample is a
whole file or a span of one (``Members``); a span that is not what its index says is a
``SpanChangedError``."""
