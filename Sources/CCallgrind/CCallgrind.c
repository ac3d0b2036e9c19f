// The module's code is its header's inline functions.
