"""The papers' methods of the privacy family, one module per method (see tasks/privacy/README.md)."""
