// The commit a binary was built from. `make release`, `make install` and `make deb` compile a one-line
// object defining `herald_build_commit` and hand it to the linker (-Xlinker): the commit costs a relink,
// never a recompile. A plain `swift build` links none, and the weak reference below is then null.
#ifndef HERALD_CHERALDBUILD_H
#define HERALD_CHERALDBUILD_H

/// The commit (`git describe --always --dirty`), or NULL when the build stamped none.
const char *herald_build_commit_or_null(void);

#endif
