#!/usr/bin/env bash
# make check's package stage: builds the .deb of a release binary, unpacks it into a scratch root as
# dpkg would install it, checks its files and conffile, and runs the packaged `herald --version`.
set -euo pipefail
binary="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
deb="$("$here/deb.sh" "$binary" "$work/out")"
dpkg-deb --info "$deb" | sed -n 's/^ *\(Package\|Version\|Depends\):/  &/p'
dpkg-deb --extract "$deb" "$work/root"
dpkg-deb --control "$deb" "$work/control"
for file in usr/bin/herald usr/lib/systemd/system/herald.service etc/herald/herald.yaml \
    usr/share/doc/herald/herald.yaml.sample usr/share/bash-completion/completions/herald \
    usr/share/zsh/vendor-completions/_herald usr/share/fish/vendor_completions.d/herald.fish \
    usr/share/man/man1/herald.1.gz; do
    [[ -s "$work/root/$file" ]] || { echo "package: $file is missing or empty" >&2; exit 1; }
done
grep -qx /etc/herald/herald.yaml "$work/control/conffiles" || { echo "package: no conffile" >&2; exit 1; }
grep -q "ExecStart=/usr/bin/herald serve" "$work/root/usr/lib/systemd/system/herald.service" \
    || { echo "package: the unit does not start /usr/bin/herald" >&2; exit 1; }
version="$("$work/root/usr/bin/herald" --version)"
[[ "$version" == *"(commit "* ]] || { echo "package: --version names no commit: $version" >&2; exit 1; }
zcat "$work/root/usr/share/man/man1/herald.1.gz" | grep -q '^\.SS herald wallet create' \
    || { echo "package: the man page lacks herald wallet create" >&2; exit 1; }
echo "package: $(basename "$deb") installs and runs: herald $version"
