"""TabICLv2 (the ``tabicl`` package, BSD-3): numpy reference of its forward and its checkpoints."""
