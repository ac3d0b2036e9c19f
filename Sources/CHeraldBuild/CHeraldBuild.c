#include "CHeraldBuild.h"

// Weak: defined only by the object `make` links in (scripts/package/commit-object.sh).
extern const char herald_build_commit[] __attribute__((weak));

const char *herald_build_commit_or_null(void) {
    return herald_build_commit;
}
