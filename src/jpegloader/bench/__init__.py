"""The benchmark: ``python -m jpegloader.benchmark`` (or ``python -m jpegloader.bench``).

    cli.py       the command line
    recipes.py   the pipelines benchmarked, by name: the transforms real recipes build
    measure.py   epochs timed side by side, CPU time, worker memory
    memory.py    PSS of a loader's processes, each loader alone in a new process
    ceiling.py   libjpeg-turbo's own decode ceiling (jpeg_limit.c, shipped here)
    corpora.py   the built-in synthetic datasets, copies of a dataset to a size, and
                 a corpus found by name (--data imagenet-sample)
    sources.py   the same files as an ImageFolder, tar shards or an Arrow dataset
    peers.py     other projects' own code, fetched into a cache when a recipe needs it
                 (DETR's, for the detr recipes)
    rtdetr_user.py   RT-DETR's classes as its users carry them, written out in its
                 interface (the rtdetr recipes)
    report.py    the table and the stage breakdown
    plots.py     the same results as PNGs (--plot DIR)

Its tools (tqdm, matplotlib) come with ``pip install 'jpegloader[bench]'``.
"""
