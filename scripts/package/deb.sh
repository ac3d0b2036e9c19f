#!/usr/bin/env bash
# Builds a Debian package of a herald binary with dpkg-deb:
#
#   scripts/package/deb.sh BINARY OUT_DIR      prints the .deb's path
#
# The files are stage.sh's (PREFIX=/usr, /etc/herald/herald.yaml a conffile); the maintainer scripts
# create the `herald` system user the unit runs as, and leave the service disabled: it needs push
# credentials before it can do anything useful.
set -euo pipefail
binary="$1"
out="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
printed="$("$binary" --version)"
number="${printed%% *}"
commit="$(printf '%s' "$printed" | sed -n 's/.*(commit \(.*\))/\1/p')"
# Debian versions sort by their parts: 0.3.0+g<commit> for a stamped build, 0.3.0 otherwise.
version="$number${commit:++g${commit//-/.}}"
arch="$(dpkg --print-architecture)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/root"

"$here/stage.sh" "$binary" "$root" /usr /etc > /dev/null
install -d "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: herald
Version: $version
Architecture: $arch
Maintainer: Herald maintainers <maintainers@users.noreply.github.com>
Depends: libc6, libgcc-s1, libstdc++6, zlib1g, libsqlite3-0, libsecp256k1-1, adduser
Section: net
Priority: optional
Description: wallet-bound push notification server
 Herald binds Ethereum wallets to device tokens only after a signature proves
 control of the wallet, fans signed notifications out to subscribers' feeds,
 and relays pushes to APNs, FCM and Web Push; secret messages are encrypted to
 the wallet's key so that neither the server nor Apple nor Google can read them.
 .
 Start it with: systemctl enable --now herald (after editing /etc/herald/herald.yaml).
CONTROL
echo "/etc/herald/herald.yaml" > "$root/DEBIAN/conffiles"
cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    if ! getent passwd herald > /dev/null; then
        adduser --system --group --home /var/lib/herald --no-create-home --quiet herald
    fi
    chown root:herald /etc/herald /etc/herald/herald.yaml
    chmod 0750 /etc/herald
    chmod 0640 /etc/herald/herald.yaml
    if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
fi
POSTINST
cat > "$root/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
# The database in /var/lib/herald and the herald user stay: removing a package never loses data.
POSTRM
chmod 0755 "$root/DEBIAN/postinst" "$root/DEBIAN/postrm"
mkdir -p "$out"
deb="$out/herald_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$root" "$deb" > /dev/null
echo "$deb"
