"""Code that a family's methods and baselines share, one sub-package per family.

``methods/<family>`` and ``baselines/<family>`` both import from
``common/<family>``; neither imports the other. Modules here may import
``bench`` and their own family's ``tasks`` and ``common`` modules, never
``methods`` or ``baselines``, so that the arrows between the packages run one
way (README, "Architecture"; ``tests/test_import_rules.py`` checks it). Nothing
here registers a method: discovery walks ``methods`` and ``baselines`` only.
"""
