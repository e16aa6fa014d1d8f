"""The paper's method for bilevel-hypercleaning: ``tsp`` (:mod:`.tsp`), see tasks/bilevel/README.md."""
