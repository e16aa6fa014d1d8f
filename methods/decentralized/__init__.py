"""The papers' methods for the decentralized tasks, one module per method (see tasks/decentralized/README.md).

Each is a node program (:class:`common.decentralized.program.NodeProgram`) that
runs inside the trusted gossip simulator of ``tasks/decentralized/gossip.py``.
"""
