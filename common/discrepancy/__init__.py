"""What discrepancy's method and baselines share (registers nothing): :mod:`.walk`,
the iterated partial colouring with its two row-selection modes (JL sketch or exact
row norms) and its two projection engines (the paper's lazy batched projection, or a
QR from scratch whenever the constraint set changes). See tasks/discrepancy/README.md.
"""
