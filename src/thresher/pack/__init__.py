"""`thresher pack`: built datasets to tokenized, shuffled, mixed training files.

`tokenizer` loads a tokenizer file (never downloaded); `mix` turns `DATASET=WEIGHT` arguments and a
token budget into per-dataset targets; `formats` writes the token files trainers read (Megatron's
`.bin`/`.idx`, flat NumPy); `run` ties them together in three bounded passes (see its docstring).
"""
