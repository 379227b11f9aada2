#!/usr/bin/env bash
# Builds chargegate_<version>_<arch>.deb and the same tree as chargegate_<version>_<arch>.tar.gz (in packages/):
# the compiled program, its production dependencies with their prebuilt native addons and the pinned Node.js, all
# for the target architecture, so that nothing is downloaded or compiled on the gateway. Needs dpkg-deb, npm and
# the npm registry; `npm run build` first (npm ci does it).
set -euo pipefail

say() { printf 'package.sh: %s\n' "$*"; }
fail() { printf 'package.sh: %s\n' "$*" >&2; exit 1; }
usage() {
  echo "usage: npm run package -- [--arch amd64|arm64|all] [--out DIR]   (default: all, into packages/)"
}

arches="amd64 arm64"
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --arch)
      case "${2:-}" in
        amd64 | arm64) arches=$2 ;;
        all) ;;
        *) echo "package.sh: --arch takes amd64, arm64 or all" >&2; exit 2 ;;
      esac
      shift 2 ;;
    --out) out=$(realpath -m "${2:?--out needs a directory}"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "package.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"
[ -f dist/cli/main.js ] || fail "dist/ is missing: npm run build first"
version=$(node -p 'require("./package.json").version')
out=${out:-$src/packages}
program=/usr/lib/chargegate

# e_machine, bytes 18-19 of the ELF header: 62 is x86-64, 183 aarch64.
elf_machine() { od -An -tu2 -j18 -N2 "$1" | tr -d ' '; }

build() {
  local arch=$1 cpu machine
  case "$arch" in
    amd64) cpu=x64 machine=62 ;;
    arm64) cpu=arm64 machine=183 ;;
  esac
  local root=$out/stage-$arch
  local lib=$root$program
  rm -rf "$root"
  mkdir -p "$lib/config"
  cp -a dist package.json package-lock.json README.md docs systemd "$lib/"
  # The compiler's record of the last build (npm run build's up-to-date check), not part of the program.
  find "$lib/dist" -name '.tsbuildinfo' -delete
  cp -a config/default.yaml "$lib/config/"
  # npm picks the optional dependencies and prebuilt addons of the target, whatever this machine is; no install
  # script runs, so nothing is compiled for this machine instead.
  (cd "$lib" && npm ci --omit=dev --os=linux --cpu="$cpu" --ignore-scripts --no-audit --no-fund --loglevel=error)
  # What only a compiler would use (headers, sources) and the addons of other systems; musl too, since the
  # Node.js shipped beside them is built for glibc.
  rm -rf "$lib/node_modules/node-linux-$cpu/include" "$lib/node_modules/better-sqlite3/deps" "$lib/node_modules/better-sqlite3/src"
  find "$lib/node_modules/better-sqlite3/prebuilds" -type f ! -name "linux-$cpu.node" -delete
  find "$lib/node_modules/@serialport/bindings-cpp/prebuilds" -mindepth 1 -maxdepth 1 ! -name "linux-$cpu" -exec rm -rf {} +
  find "$lib/node_modules/@serialport/bindings-cpp/prebuilds" -type f -name '*musl*' -delete

  local binaries=(node_modules/.bin/node "node_modules/better-sqlite3/prebuilds/linux-$cpu.node")
  binaries+=("$(cd "$lib" && find node_modules/@serialport/bindings-cpp/prebuilds -name '*.glibc.node')")
  local other
  other=$(cd "$lib" && find . -name '*.node' -type f | grep -vFx -e "./${binaries[1]}" -e "./${binaries[2]}" || true)
  [ -z "$other" ] || fail "$arch: unexpected native addons: $other"
  for binary in "${binaries[@]}"; do
    [ -f "$lib/$binary" ] || fail "$arch: $binary is missing"
    [ "$(elf_machine "$lib/$binary")" = "$machine" ] || fail "$arch: $binary is not built for $arch"
  done

  # The CLI, the unit and the service user where a package puts them; the unit runs the shipped Node.js.
  mkdir -p "$root/usr/bin" "$root/usr/lib/systemd/system" "$root/usr/lib/sysusers.d"
  ln -s ../lib/chargegate/systemd/chargegate "$root/usr/bin/chargegate"
  sed -e "s#/opt/chargegate/#$program/#g" systemd/chargegate.service >"$root/usr/lib/systemd/system/chargegate.service"
  install -m 0644 systemd/chargegate.sysusers "$root/usr/lib/sysusers.d/chargegate.conf"

  mkdir -p "$out"
  local name=chargegate_${version}_${arch}
  tar -C "$root" --owner=0 --group=0 -czf "$out/$name.tar.gz" usr

  mkdir -p "$root/DEBIAN"
  install -m 0755 packaging/deb/preinst packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$root/DEBIAN/"
  cat >"$root/DEBIAN/control" <<CONTROL
Package: chargegate
Version: $version
Architecture: $arch
Maintainer: chargegate maintainers <maintainers@users.noreply.a-seed-1d286537.example>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: libc6 (>= 2.28), libstdc++6, libgcc-s1, systemd, init-system-helpers (>= 1.54~)
Section: net
Priority: optional
Description: EV-charging site gateway: OCPP central system, Modbus meters, webhooks
 One daemon on the site gateway is the OCPP central system (2.0.1 and 1.6-J) for
 the site's charging stations, polls Modbus meters to detect sessions on chargers
 that speak no OCPP, and tells partners what happens through signed webhooks.
 It runs on the Node.js 24 it ships in /usr/lib/chargegate.
CONTROL
  # xz -2: on two cores a minute less per package than dpkg-deb's -6, for 41 MB instead of 35 MB (amd64).
  dpkg-deb --root-owner-group -Zxz -z2 --build "$root" "$out/$name.deb" >/dev/null
  rm -rf "$root"
  say "$out/$name.deb ($(du -h "$out/$name.deb" | cut -f1)), $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1))"
}

for arch in $arches; do build "$arch"; done
