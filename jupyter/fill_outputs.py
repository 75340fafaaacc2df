"""Runs a notebook through the wengert kernel and writes it back with its
outputs, so that a reader on a notebook viewer sees them (tests/jupyter/
notebook_test.py checks that the stored outputs are what the kernel gives).
Timing metadata is left out, so the file only changes when an output does.
Usage (after `make jupyter`): /usr/bin/python3 jupyter/fill_outputs.py examples/first_steps.ipynb"""
import os
import sys

import nbformat
from nbclient import NotebookClient

for path in sys.argv[1:]:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="wengert", timeout=120,
                   resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    print("wrote", path)
