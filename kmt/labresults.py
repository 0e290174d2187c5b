"""Results a lab sent back: LAVA jobs of exported cells and benchmark
boots (make lava-import), kept under results/lab/ and listed beside the
local results (results/<matrix>.json: lab_cells; results/bench/
results.json: lab_records). Written by lavarun, read by matrix and bench,
which therefore need nothing of lavarun."""

import json
import os

from . import paths, results


def lab_dir(matrix):
    return os.path.join(paths.RESULTS, 'lab', matrix)


def slug(text):
    return ''.join(c if c.isalnum() or c in '.-_' else '_' for c in text)


def lab_cells(matrix):
    """The lab records kept for a matrix, oldest file name first."""
    d = lab_dir(matrix)
    out = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else ():
        if f.endswith('.json'):
            with open(os.path.join(d, f)) as fh:
                out.append(json.load(fh)['record'])
    return out


def lab_bench_records():
    d = os.path.join(paths.RESULTS, 'lab', 'bench')
    out = []
    for f in sorted(os.listdir(d)) if os.path.isdir(d) else ():
        if f.endswith('.json'):
            with open(os.path.join(d, f)) as fh:
                out += json.load(fh)['records']
    return out


def merge_lab_bench():
    """Rewrite results/bench/results.json with every lab record."""
    path = os.path.join(paths.RESULTS, 'bench', 'results.json')
    data = {'records': []}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data['lab_records'] = lab_bench_records()
    results.write_json(path, data)
    return data


def merge_lab_cells(matrix):
    """Rewrite results/<matrix>.json with every lab record (lab_cells)."""
    path = os.path.join(paths.RESULTS, '%s.json' % matrix)
    data = {'matrix': matrix, 'cells': []}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data['lab_cells'] = lab_cells(matrix)
    results.write_json(path, data)
    return data
