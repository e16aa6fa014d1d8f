"""Code shared by the methods and baselines of the ``unnormalized-estimation`` task (see tasks/nce/README.md)."""
