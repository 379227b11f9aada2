#!/usr/bin/env bash
# Installs chargegate as a systemd service on this machine: the build under the prefix, the CLI on the PATH,
# the unit, the service user, a config skeleton and the keystore passphrase credential.
# Run it from a source checkout: `npm ci && sudo scripts/install.sh`. Running it again upgrades the program and
# keeps the config and the passphrase.
set -euo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/install.sh [--prefix DIR] [--destdir DIR] [--no-build] [--uninstall]

  --prefix DIR   where the program goes (default /opt/chargegate)
  --destdir DIR  stage every file under DIR instead of / (packaging, tests): no user is created, systemctl is not
                 called, file ownership is left alone
  --no-build     install the existing dist/ instead of running `npm run build` first
  --uninstall    stop and disable the service, remove the program, the CLI and the unit; keep /etc/chargegate,
                 /var/lib/chargegate and the user (the config, the passphrase, the keystore and the database)
The service and the CLI run on the Node.js that chargegate brings (node_modules/.bin/node, pinned by the lockfile):
the machine's own node, if any, is used only by npm to install.
USAGE
}

prefix=/opt/chargegate
destdir=
build=yes
uninstall=no
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --destdir) destdir=${2:?--destdir needs a directory}; shift 2 ;;
    --no-build) build=no; shift ;;
    --uninstall) uninstall=yes; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be an absolute path" >&2; exit 2 ;; esac
# The unit's ProtectHome=yes hides these from the service: a program installed there would never start.
case "$prefix/" in
  /home/* | /root/* | /run/user/*)
    echo "install.sh: --prefix $prefix is under /home, /root or /run/user, which the service cannot see (ProtectHome=yes); choose a directory such as /opt/chargegate" >&2
    exit 2 ;;
esac
if [ -n "$destdir" ]; then destdir=$(realpath -m "$destdir"); fi

say() { printf 'install.sh: %s\n' "$*"; }
fail() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

systemd_running() { [ -z "$destdir" ] && [ -d /run/systemd/system ]; }

if [ "$uninstall" = yes ]; then
  if [ -z "$destdir" ] && [ "$(id -u)" -ne 0 ]; then fail "uninstalling from / needs root: sudo $0 --uninstall"; fi
  if systemd_running; then systemctl disable --now chargegate 2>/dev/null || true; fi
  rm -rf "$destdir$prefix" "$destdir/usr/local/bin/chargegate" "$destdir/etc/systemd/system/chargegate.service" "$destdir/etc/sysusers.d/chargegate.conf"
  if systemd_running; then systemctl daemon-reload; fi
  say "removed the program, the CLI and the unit; kept $destdir/etc/chargegate, $destdir/var/lib/chargegate and the user chargegate"
  exit 0
fi

src=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$src/package.json" ] && grep -q '"name": "chargegate"' "$src/package.json" || fail "run me from a chargegate source checkout"
if [ -z "$destdir" ] && [ "$(id -u)" -ne 0 ]; then fail "installing into / needs root: sudo $0 $*"; fi

# ---- the program ---------------------------------------------------------------------------------------------
cd "$src"
if [ "$build" = yes ]; then
  [ -d node_modules ] || npm ci --no-audit --no-fund
  say "building"
  npm run build --silent
fi
[ -f dist/cli/main.js ] || fail "dist/cli/main.js is missing: run without --no-build, or npm run build first"
[ -x node_modules/.bin/node ] || fail "node_modules/.bin/node is missing: npm ci installs the Node.js chargegate runs on"

target=$destdir$prefix
staging=$target.new
rm -rf "$staging"
mkdir -p "$staging"
cp -a dist package.json package-lock.json README.md docs "$staging/"
mkdir -p "$staging/config" "$staging/systemd"
cp -a config/default.yaml "$staging/config/"
cp -a systemd/. "$staging/systemd/"
# The checkout's modules were built for this machine's Node (better-sqlite3, serialport): copy them and drop the
# development ones, so the gateway needs neither a compiler nor the registry.
cp -a node_modules "$staging/"
(cd "$staging" && npm prune --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
# Swap in the new version whole: a running daemon keeps its open files until it restarts.
if [ -d "$target" ]; then
  rm -rf "$target.old"
  mv "$target" "$target.old"
fi
mv "$staging" "$target"
rm -rf "$target.old"
say "program installed in $target"
# The runtime chargegate brings, as the unit and the CLI name it.
node=$prefix/node_modules/.bin/node
say "runtime: Node.js $("$destdir$node" --version) ($node)"

# ---- the CLI on the PATH, the unit, the user, config skeleton and keystore passphrase -----------------------------
# Relative, so that a staged tree (--destdir) is complete in itself.
mkdir -p "$destdir/usr/local/bin"
ln -sfr "$target/systemd/chargegate" "$destdir/usr/local/bin/chargegate"
mkdir -p "$destdir/etc/systemd/system" "$destdir/etc/sysusers.d"
sed -e "s#/opt/chargegate/#$prefix/#g" systemd/chargegate.service >"$destdir/etc/systemd/system/chargegate.service"
chmod 0644 "$destdir/etc/systemd/system/chargegate.service"
install -m 0644 systemd/chargegate.sysusers "$destdir/etc/sysusers.d/chargegate.conf"
if [ -n "$destdir" ]; then
  "$target/systemd/setup-host.sh" --root "$destdir" --no-user
else
  "$target/systemd/setup-host.sh"
fi
"$destdir$node" "$target/dist/cli/main.js" check-config --config "$destdir/etc/chargegate/chargegate.yaml"

if systemd_running; then
  systemctl daemon-reload
  if systemctl is-active --quiet chargegate; then
    say "chargegate is running the previous version: sudo systemctl restart chargegate"
  else
    say "next: edit /etc/chargegate/chargegate.yaml, then sudo systemctl enable --now chargegate"
  fi
else
  say "done (systemd is not running here: nothing was enabled or started)"
fi
