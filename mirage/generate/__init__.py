"""Generation stage: model registry, four providers behind one interface, and the resumable completion store."""
