"""Decentralized and robust computation: nodes on a graph that talk only to their neighbours.

One trusted gossip simulator (:mod:`.gossip`) serves three tasks, one sub-package each:

- ``conformal-decentralized`` (:mod:`.conformal`): distributed conformal prediction (DCP);
- ``robust-gossip`` (:mod:`.robust`): Byzantine-robust gossip (CS+-RG);
- ``decentralized-optimization`` (:mod:`.optimization`): similarity-exploiting optimisation (SPDO).

See ``tasks/decentralized/README.md``.
"""
