"""Rewrite ``tasks/index.json`` (task name -> module) from full task discovery.

Run it after adding, renaming or moving a task; ``tests/test_registry.py``
fails while the index is stale. The index only speeds lookups up: a task
missing from it is still found, by importing every family.
"""

from bench.registry import write_task_index

if __name__ == "__main__":
    print(f"wrote {write_task_index()}")
