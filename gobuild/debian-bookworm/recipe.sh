# Debian 12 (bookworm) packages as image layers, the way distroless-iptables
# makes its images: each layer's packages (packages.lock, written by pin.sh)
# downloaded with this machine's apt at their pinned versions, checked against
# the pinned SHA256, unpacked with dpkg-deb -x (no maintainer scripts run), then
# what the maintainer scripts would have set up done here (alternatives
# symlinks, the CA bundle), and documentation pruned to the copyright files.
# Output per layer: OUT/<layer>/rootfs/ and OUT/<layer>/packages (what it holds).
# Every ELF file's libraries must be found in its layer or the layers below
# (glibc), else the build fails naming them.
# shellcheck shell=bash

targets() {
  sed -n 's/^\([a-z0-9]*\):.*/\1/p' layers | grep -vx exclude
}

# Layers whose libraries a layer's programs load (besides its own).
below() {
  case $1 in
    netfilter | libstdcxx) echo glibc ;;
  esac
}

build_target() {
  local out=$1 layer=$2 root dl p ver sha got b
  . /etc/os-release
  [ "${VERSION_CODENAME:-}" = bookworm ] || {
    echo "gobuild: debian-bookworm downloads Debian 12 packages with this machine's apt; it runs ${VERSION_CODENAME:-unknown}" >&2
    return 2
  }
  for b in $(below "$layer"); do [ -f "$out/.done-$b" ] || build_target "$out" "$b"; done
  root="$out/$layer/rootfs"
  dl="$out/$layer/debs"
  rm -rf "${out:?}/$layer"
  mkdir -p "$root" "$dl"
  # One apt-get for the layer (apt is slow to start on a busy machine); packages
  # already fetched for an earlier key come from the cache's .debian-debs, by SHA256.
  local debs="${out%/*}/.debian-debs" want=()
  mkdir -p "$debs"
  while read -r _ p ver sha; do
    [ -f "$debs/$sha.deb" ] || want+=("$p=$ver")
  done < <(awk -v l="$layer" '$1 == l' packages.lock)
  if [ ${#want[@]} -gt 0 ]; then
    (cd "$dl" && apt-get download -q=2 "${want[@]}" 2>/dev/null) || {
      echo "gobuild: Debian's archive no longer offers one of ${want[*]} (pinned in gobuild/debian-bookworm/packages.lock): run apt-get update; if apt-get download still fails, bookworm has moved on: run gobuild/debian-bookworm/pin.sh, review the diff, commit" >&2
      return 1
    }
  fi
  local f
  while read -r _ p ver sha; do
    f="$debs/$sha.deb"
    [ -f "$f" ] || f=$(echo "$dl/${p}_"*.deb)
    got=$(sha256sum "$f" | cut -d' ' -f1)
    [ "$got" = "$sha" ] || {
      echo "gobuild: $p=$ver has SHA256 $got, packages.lock pins $sha" >&2
      return 1
    }
    dpkg-deb -x "$f" "$root"
    [ "$f" = "$debs/$sha.deb" ] || mv "$f" "$debs/$sha.deb"
    printf '%s %s %s\n' "$p" "$ver" "$sha" >> "$out/$layer/packages"
  done < <(awk -v l="$layer" '$1 == l' packages.lock)
  [ -s "$out/$layer/packages" ] || { echo "gobuild: layer $layer has no packages in packages.lock" >&2; return 1; }
  "setup_$layer" "$root"
  prune "$root"
  check_libraries "$out" "$layer"
  rm -rf "$dl"
}

# Only the copyright files stay of /usr/share/doc; no manuals, no lintian notes.
prune() {
  local root=$1
  rm -rf "$root/usr/share/man" "$root/usr/share/info" "$root/usr/share/lintian" "$root/usr/share/bug" \
    "$root/usr/share/doc-base" "$root/usr/share/bash-completion" "$root/usr/share/locale"
  if [ -d "$root/usr/share/doc" ]; then
    find "$root/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  fi
}

setup_base() {
  local root=$1
  cp -r files/base/. "$root/"
  chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"
  # update-ca-certificates' bundle: every certificate ca-certificates ships, in the
  # order its postinst lists them (sorted paths), each ending in a newline.
  mkdir -p "$root/etc/ssl/certs"
  (cd "$root/usr/share/ca-certificates" && find . -type f -name '*.crt' -printf '%P\n' | LC_ALL=C sort |
    while read -r c; do sed -e '$a\' "$c"; done) > "$root/etc/ssl/certs/ca-certificates.crt"
  rm -rf "$root/usr/share/ca-certificates" "$root/usr/sbin/update-ca-certificates" "$root/etc/ca-certificates"
  install -d -m 1777 "$root/tmp"
  install -d -m 0700 "$root/root" "$root/home/nonroot"
}

# glibc's iconv modules (gconv, 8 MB): nothing in these images converts charsets.
setup_glibc() { rm -rf "$1/usr/lib/x86_64-linux-gnu/gconv"; }
setup_libstdcxx() { :; }
setup_busybox() {
  # The one applet the flannel images' init containers run (`cp -f …`).
  ln -s busybox "$1/bin/cp"
}

# What update-alternatives would link: the nf_tables variants, Debian's default
# (and the kernel's only backend on current distributions). Upstream's images
# pick the mode per host with iptables-wrapper, which the proxy does not serve.
setup_netfilter() {
  local root=$1 t s
  # tc's ATM qdisc module needs libatm1, which iproute2 only recommends: tc loads it on demand.
  rm -f "$root/usr/lib/x86_64-linux-gnu/tc/q_atm.so"
  for t in iptables ip6tables; do
    for s in "" -restore -save; do
      ln -sf "$t-nft$s" "$root/usr/sbin/$t$s"
      [ -e "$root/usr/sbin/$t$s" ] || { echo "gobuild: $t$s -> $t-nft$s dangles" >&2; return 1; }
    done
  done
}

# check_libraries OUT LAYER: each ELF file's DT_NEEDED libraries exist in the
# layer or the layers below it (multiarch library folders of Debian 12).
check_libraries() {
  local out=$1 layer=$2 f lib dir found missing=() roots
  roots="$out/$layer/rootfs"
  for b in $(below "$layer"); do roots="$roots $out/$b/rootfs"; done
  while IFS= read -r f; do
    while read -r lib; do
      found=
      [ -e "$(dirname "$f")/$lib" ] && continue # $ORIGIN
      for r in $roots; do
        for dir in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu lib64 usr/lib64 lib usr/lib; do
          [ -e "$r/$dir/$lib" ] && found=1 && break 2
        done
      done
      [ -n "$found" ] || missing+=("${f#"$out/"} needs $lib")
    done < <(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  done < <(find "$out/$layer/rootfs" -type f -perm /111 -o -type f -name '*.so*')
  [ ${#missing[@]} -eq 0 ] || {
    printf 'gobuild: library not in the image: %s\n' "${missing[@]}" >&2
    return 1
  }
}
