"""What the decentralized methods share: :mod:`.program` turns a node program written as a
generator into the simulator's ``select(state)`` answers. See tasks/decentralized/README.md.
"""
