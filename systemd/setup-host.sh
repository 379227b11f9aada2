#!/bin/bash
# What a chargegate install needs on the host besides the program: the service user, the state directory, the config
# skeleton and the keystore passphrase. Shared by scripts/install.sh and the .deb's postinst, so both install the same.
# Written once, never overwritten: the config is the installer's, and a new passphrase would lock out the keystore.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: setup-host.sh [--root DIR] [--no-user]

  --root DIR   the system root to set up (default /; dpkg --root gives its own as DPKG_ROOT)
  --no-user    stage files only (packaging, tests): no user is created and file ownership is left alone
USAGE
}

root=${DPKG_ROOT:-}
user=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    --no-user) user=no; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "setup-host.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
root=${root%/}
here=$(dirname "$(readlink -f "$0")")

say() { printf 'chargegate: %s\n' "$*"; }
# Looked up in the root's own files: under dpkg --root the host's user database is not the one being set up.
id_in() { awk -F: -v name=chargegate '$1 == name { print $3 }' "$root/etc/$1"; }

if [ "$user" = yes ]; then
  if command -v systemd-sysusers >/dev/null; then
    # By name: systemd-sysusers finds chargegate.conf in the root's sysusers.d, wherever the installer put it.
    systemd-sysusers ${root:+--root="$root"} chargegate.conf
  else
    [ -n "$(id_in passwd 2>/dev/null)" ] || useradd ${root:+--prefix "$root"} --system --user-group --home-dir /var/lib/chargegate --no-create-home --shell /usr/sbin/nologin chargegate
    grep -q '^dialout:' "$root/etc/group" && usermod ${root:+--prefix "$root"} -a -G dialout chargegate
  fi
  install -d -o "$(id_in passwd)" -g "$(id_in group)" -m 0750 "$root/var/lib/chargegate"
  say "user chargegate ready"
fi

config_dir=$root/etc/chargegate
install -d -m 0755 "$config_dir"
if [ -e "$config_dir/chargegate.yaml" ]; then
  say "kept the existing $config_dir/chargegate.yaml"
else
  install -m 0640 "$here/chargegate.yaml" "$config_dir/chargegate.yaml"
  say "wrote the config skeleton $config_dir/chargegate.yaml"
fi
# root:chargegate 0640: the daemon reads it, and it holds webhook secrets.
[ "$user" = yes ] && chgrp "$(id_in group)" "$config_dir/chargegate.yaml"
install -d -m 0700 "$config_dir/credentials"
passphrase=$config_dir/credentials/keystore-passphrase
# An empty file (a run cut short) counts as none: the daemon reads an empty passphrase as no encryption at all.
if [ -s "$passphrase" ]; then
  say "kept the existing keystore passphrase"
else
  # base64 is in every coreutils (basenc only from 8.31); written aside and moved, so it is whole or absent.
  (umask 077 && head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' >"$passphrase.new")
  [ -s "$passphrase.new" ] && mv "$passphrase.new" "$passphrase"
  say "made the keystore passphrase $passphrase"
fi
