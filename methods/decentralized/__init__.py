"""The papers' methods for the decentralized tasks, one module per method (see tasks/decentralized/README.md).

Each is a node program (:class:`common.decentralized.program.NodeProgram`) that
runs inside the trusted gossip simulator of ``tasks/decentralized/gossip.py``:
``h-dcp`` (:mod:`.h_dcp`) and ``q-dcp`` (:mod:`.q_dcp`) for conformal-decentralized,
``cs-plus-rg`` (:mod:`.cs_plus_rg`) for robust-gossip, ``spdo`` (:mod:`.spdo`) for
decentralized-optimization.
"""
