"""What the decentralized methods share (method-side code; registers nothing):

- :mod:`.program`: a node program written as a generator, turned into the simulator's
  ``select(state)`` answers;
- :mod:`.flooding`: every node learns every node's row over ``exchange`` rounds (Q-DCP's
  correction terms, the centralised-CP baseline);
- :mod:`.robust`: the robust aggregation rules of robust-gossip (CS+, ClippedGossip, NNA,
  trimmed mean) and the F-RG node program.

See tasks/decentralized/README.md.
"""
