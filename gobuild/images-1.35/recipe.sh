# Recipe for one Kubernetes release's images and node downloads (copied, unchanged,
# into images-<minor>/recipe.sh; what differs per release is in its `release`
# file). Everything comes from other recipes (listed in `deps`, so their cache
# keys are part of this one's) and Debian 12 packages (debian-bookworm):
#
#   images/<name>_<tag>.tar  one OCI image layout archive per image kubeadm names
#                            for the release (`kubeadm config images list`) and
#                            per image kubemix's Linux manifests name (flannel)
#   release/…                node downloads under upstream's file names, each
#                            with upstream's checksum file beside it
#   mirror/<host>/<path>     the same files at their upstream URLs' paths (hard
#                            links): a folder to serve as spec.mirrors.artifacts
#   MANIFEST                 one line per output: KIND NAME FILE SHA256 DETAIL
#   INPUTS                   the recipe folders and Debian packages it was made of
#
#   gobuild/build.sh images-1.36 → the folder
# shellcheck shell=bash

IMAGES="kube-apiserver kube-controller-manager kube-scheduler kube-proxy etcd coredns pause flannel flannel-cni-plugin"

targets() {
  # shellcheck disable=SC2086 # a list
  printf '%s\n' release $IMAGES manifest
}

# shellcheck disable=SC1091
. ./release

build_target() {
  local out=$1 t=$2
  OUT=$out
  case $t in
    release) build_release "$out" ;;
    manifest) build_manifest "$out" ;;
    *) build_image "$out" "$t" ;;
  esac
}

# ---- inputs ---------------------------------------------------------------

# Folder of RECIPE[:TARGETS] (built when missing), noted for INPUTS.
input() {
  local dir
  dir=$(dep_dir "$1") || return 1
  printf 'recipe %s\n' "$dir" >> "$OUT/.inputs"
  printf '%s\n' "$dir"
}

# shellcheck disable=SC2154 # $here: gobuild/, set by build.sh
# The time a component's module version was published, read in its recipe's
# folder: each image's creation time and every file's mtime (deterministic).
published() {
  (cd "$here/$1" && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' "$2")
}

# expect_version DIR WANT: the recipe folder built WANT (its VERSION file).
expect_version() {
  local got
  got=$(cat "$1/VERSION")
  [ "$got" = "$2" ] || {
    echo "gobuild: $(basename "$1") built $got, but this release needs $2 (gobuild/$(basename "$PWD")/release)" >&2
    return 1
  }
}

# ---- node downloads ---------------------------------------------------------

build_release() {
  local out=$1 k c r n cr f
  k=$(input "$KUBERNETES_RECIPE:kubeadm,kubelet,kubectl")
  c=$(input containerd:release)
  r=$(input runc:release)
  n=$(input cni-plugins:release)
  cr=$(input cri-tools:release)
  expect_version "$k" "$KUBERNETES_VERSION"
  expect_version "$c" "v$CONTAINERD_VERSION"
  expect_version "$r" "v$RUNC_VERSION"
  expect_version "$n" "v$CNI_PLUGINS_VERSION"
  expect_version "$cr" "$CRICTL_VERSION"
  rm -rf "$out/release" "$out/mirror"
  mkdir -p "$out/release"
  for f in kubeadm kubelet kubectl; do
    cp "$k/bin/$f" "$out/release/$f"
    # dl.k8s.io publishes <file>.sha256 holding the bare digest.
    sha256sum "$out/release/$f" | cut -d' ' -f1 > "$out/release/$f.sha256"
    mirror "$out" "dl.k8s.io/$KUBERNETES_VERSION/bin/linux/amd64" "$f" "$f.sha256"
  done
  cp "$c/release/"* "$r/release/"* "$n/release/"* "$cr/release/"* "$out/release/"
  mirror "$out" "github.com/containerd/containerd/releases/download/v$CONTAINERD_VERSION" \
    "containerd-$CONTAINERD_VERSION-linux-amd64.tar.gz" "containerd-$CONTAINERD_VERSION-linux-amd64.tar.gz.sha256sum"
  mirror "$out" "github.com/opencontainers/runc/releases/download/v$RUNC_VERSION" runc.amd64 runc.sha256sum
  mirror "$out" "github.com/containernetworking/plugins/releases/download/v$CNI_PLUGINS_VERSION" \
    "cni-plugins-linux-amd64-v$CNI_PLUGINS_VERSION.tgz" "cni-plugins-linux-amd64-v$CNI_PLUGINS_VERSION.tgz.sha256"
  mirror "$out" "github.com/kubernetes-sigs/cri-tools/releases/download/$CRICTL_VERSION" \
    "crictl-$CRICTL_VERSION-linux-amd64.tar.gz" "crictl-$CRICTL_VERSION-linux-amd64.tar.gz.sha256"
}

# mirror OUT URLPATH FILE…: release/FILE also at mirror/URLPATH/FILE.
mirror() {
  local out=$1 path=$2 f
  shift 2
  mkdir -p "$out/mirror/$path"
  for f in "$@"; do
    [ -f "$out/release/$f" ] || { echo "gobuild: release/$f missing" >&2; return 1; }
    ln -f "$out/release/$f" "$out/mirror/$path/$f"
  done
}

# ---- images -----------------------------------------------------------------

# image OUT ENTRY REF CREATED [oci-image flags…]: images/<repo>_<tag>.tar, and
# its MANIFEST line in images/ENTRY.entry.
image() {
  local out=$1 entry=$2 ref=$3 created=$4 tool summary file digest
  shift 4
  tool=$(input oci-image)/bin/oci-image
  mkdir -p "$out/images"
  file="images/$(basename "${ref%:*}")_${ref##*:}.tar"
  rm -f "$out/$file" "$out/images/$entry.entry"
  summary=$("$tool" --out "$out/$file" --ref "$ref" --created "$created" "$@")
  digest=$(printf '%s' "$summary" | sed -n 's/.*"digest":"\([^"]*\)".*/\1/p')
  printf 'image %s %s %s %s\n' "$ref" "$file" "$(sha256sum "$out/$file" | cut -d' ' -f1)" "$digest" > "$out/images/$entry.entry"
}

# A folder holding FILE… (copied from SRC/) at DEST inside the image.
stage() {
  local dir=$1 dest=$2 src=$3 f
  shift 3
  rm -rf "$dir"
  mkdir -p "$dir$dest"
  for f in "$@"; do install -m 0755 "$src/$f" "$dir$dest/$f"; done
}

build_image() {
  local out=$1 name=$2 deb k created s e tag
  s="$out/stage/$name"
  deb=$(input debian-bookworm)
  local base=(--layer "$deb/base/rootfs" --history "debian-bookworm: $(layer_packages "$deb" base)")
  local glibc=(--layer "$deb/glibc/rootfs" --history "debian-bookworm: $(layer_packages "$deb" glibc)")
  local netfilter=(--layer "$deb/netfilter/rootfs" --history "debian-bookworm: $(layer_packages "$deb" netfilter)")
  local busybox=(--layer "$deb/busybox/rootfs" --history "debian-bookworm: $(layer_packages "$deb" busybox)")
  case $name in
    kube-apiserver | kube-controller-manager | kube-scheduler | kube-proxy)
      k=$(input "$KUBERNETES_RECIPE:$name")
      expect_version "$k" "$KUBERNETES_VERSION"
      created=$(published "$KUBERNETES_RECIPE" k8s.io/kubernetes)
      stage "$s" /usr/local/bin "$k/bin" "$name"
      local extra=()
      # kube-proxy programs the host's netfilter: iptables (nf_tables), nft and conntrack.
      [ "$name" = kube-proxy ] && extra=("${glibc[@]}" "${netfilter[@]}")
      image "$out" "$name" "registry.k8s.io/$name:$KUBERNETES_VERSION" "$created" \
        "${base[@]}" "${extra[@]}" --layer "$s" --history "$KUBERNETES_RECIPE: $name $KUBERNETES_VERSION" \
        --entrypoint "/usr/local/bin/$name" "${LABELS[@]}" \
        --label "org.opencontainers.image.version=$KUBERNETES_VERSION"
      ;;
    etcd)
      e=$(input "$ETCD_RECIPE")
      expect_version "$e" "v${ETCD_TAG%-*}"
      created=$(published "$ETCD_RECIPE" go.etcd.io/etcd/server/v3)
      stage "$s" /usr/local/bin "$e/bin" etcd etcdctl
      image "$out" etcd "registry.k8s.io/etcd:$ETCD_TAG" "$created" \
        "${base[@]}" --layer "$s" --history "$ETCD_RECIPE: etcd, etcdctl v${ETCD_TAG%-*}" \
        --entrypoint /usr/local/bin/etcd "${LABELS[@]}" --label "org.opencontainers.image.version=$ETCD_TAG"
      ;;
    coredns)
      e=$(input "$COREDNS_RECIPE")
      expect_version "$e" "$COREDNS_TAG"
      created=$(published "$COREDNS_RECIPE" github.com/coredns/coredns)
      stage "$s" / "$e/bin" coredns
      # As CoreDNS' Dockerfile: non-root, the binary may bind :53 (setcap cap_net_bind_service=+ep);
      # kubeadm's Deployment adds NET_BIND_SERVICE and drops the rest, without a runAsUser.
      image "$out" coredns "registry.k8s.io/coredns/coredns:$COREDNS_TAG" "$created" \
        "${base[@]}" --layer "$s" --history "$COREDNS_RECIPE: coredns $COREDNS_TAG" \
        --file-cap /coredns=net_bind_service --entrypoint /coredns --user 65532:65532 \
        "${LABELS[@]}" --label "org.opencontainers.image.version=$COREDNS_TAG"
      ;;
    pause)
      e=$(input pause)
      created=$(published "$KUBERNETES_RECIPE" k8s.io/kubernetes)
      stage "$s" / "$e/bin" pause
      # As Kubernetes' build/pause/Dockerfile: the binary alone, user 65535. One archive
      # per tag: kubeadm's and the sandbox image kubemix sets in containerd's config.
      for tag in $PAUSE_TAGS; do
        image "$out" "pause-$tag" "registry.k8s.io/pause:$tag" "$created" \
          --layer "$s" --history "pause: kubemix's pause $(cat "$e/VERSION") (does what pause.c does)" \
          --entrypoint /pause --user 65535:65535 "${LABELS[@]}" --label "org.opencontainers.image.version=$tag"
      done
      ;;
    flannel)
      e=$(input flannel)
      expect_version "$e" "$FLANNEL_TAG"
      created=$(published flannel github.com/flannel-io/flannel)
      stage "$s" /opt/bin "$e/bin" flanneld
      # kube-flannel's init container runs `cp`; flanneld runs iptables/nft and ip.
      image "$out" flannel "ghcr.io/flannel-io/flannel:$FLANNEL_TAG" "$created" \
        "${base[@]}" "${glibc[@]}" "${netfilter[@]}" "${busybox[@]}" --layer "$s" --history "flannel: flanneld $FLANNEL_TAG" \
        --entrypoint /opt/bin/flanneld "${LABELS[@]}" --label "org.opencontainers.image.version=$FLANNEL_TAG"
      ;;
    flannel-cni-plugin)
      e=$(input flannel-cni)
      created=$(published flannel-cni github.com/containernetworking/plugins)
      stage "$s" / "$e/bin" flannel
      image "$out" flannel-cni-plugin "ghcr.io/flannel-io/flannel-cni-plugin:$FLANNEL_CNI_TAG" "$created" \
        "${busybox[@]}" --layer "$s" --history "flannel-cni: the flannel CNI plugin of containernetworking/plugins $(cat "$e/VERSION")" \
        "${LABELS[@]}" --label "org.opencontainers.image.version=$FLANNEL_CNI_TAG" \
        --label "org.opencontainers.image.description=the flannel CNI plugin from github.com/containernetworking/plugins $(cat "$e/VERSION") (flannel-io/cni-plugin is not on the Go module proxy)"
      ;;
  esac
  rm -rf "$s"
}

LABELS=(--label "org.opencontainers.image.vendor=built by kubemix gobuild from the Go module proxy and Debian 12 packages")

layer_packages() {
  cut -d' ' -f1,2 "$1/$2/packages" | tr ' ' '=' | tr '\n' ' ' | sed 's/ $//'
}

# ---- MANIFEST ---------------------------------------------------------------

build_manifest() {
  local out=$1 t f
  for t in release $IMAGES; do [ -f "$out/.done-$t" ] || build_target "$out" "$t"; done
  {
    echo "# gobuild $(basename "$PWD"): KIND NAME FILE SHA256 DETAIL (image: manifest digest; release: upstream URL)"
    cat "$out/images/"*.entry | LC_ALL=C sort
    (cd "$out" && find mirror -type f | LC_ALL=C sort) | while read -r f; do
      printf 'release %s release/%s %s https://%s\n' "$(basename "$f")" "$(basename "$f")" \
        "$(sha256sum "$out/$f" | cut -d' ' -f1)" "${f#mirror/}"
    done
  } > "$out/MANIFEST"
  {
    echo "# recipe folders (gobuild cache) and Debian packages this folder was made of"
    LC_ALL=C sort -u "$out/.inputs"
    sed 's/^/debian /' "$(input debian-bookworm)"/*/packages
  } > "$out/INPUTS"
}
