"""Resumes a saved loader state in a fresh interpreter (test_state.py):
python -m tests.dataloader.resume_child CASE ROOT STATE.json OUT.pt"""
import json
import sys

import torch

from tests.dataloader.resume_cases import resume_and_run

if __name__ == "__main__":
    case, root, state_path, out_path = sys.argv[1:]
    with open(state_path) as f:
        state = json.load(f)
    torch.save(resume_and_run(case, root, 1, state), out_path)
