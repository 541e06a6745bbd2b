// Command oci-image assembles a container image from folders, one layer per
// folder, without a container engine, and writes it as an OCI image layout
// archive (a tar holding oci-layout, index.json and blobs/sha256/…) that
// `ctr images import`, skopeo, crane and `kubemix up --images` read.
//
// The output is deterministic: the same folders and flags give the same bytes
// (entries sorted, owners numeric and 0:0 unless --chown says otherwise, every
// time the --created one, gzip without a name or time).
//
//	oci-image --out pause.tar --ref registry.k8s.io/pause:3.10.2 \
//	  --created 2025-06-01T00:00:00Z --layer base/ --layer pause/ \
//	  --entrypoint /pause --user 65535:65535
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

type options struct {
	out, ref, created, user, workdir, platform string
	layers, entrypoint, cmd, env, labels       list
	chown, caps, history                       list
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "", "archive to write (`FILE`.tar)")
	flag.StringVar(&o.ref, "ref", "", "image name with tag, e.g. registry.k8s.io/pause:3.10.2")
	flag.StringVar(&o.created, "created", "", "creation time (RFC 3339), also every file's mtime")
	flag.StringVar(&o.platform, "platform", "linux/amd64", "OS/architecture")
	flag.StringVar(&o.user, "user", "", "user[:group] the image runs as")
	flag.StringVar(&o.workdir, "workdir", "/", "working directory")
	flag.Var(&o.layers, "layer", "`DIR` whose tree is one layer (repeatable, bottom first)")
	flag.Var(&o.history, "history", "what made each layer, in --layer order (repeatable)")
	flag.Var(&o.entrypoint, "entrypoint", "entrypoint argument (repeatable)")
	flag.Var(&o.cmd, "cmd", "default argument (repeatable)")
	flag.Var(&o.env, "env", "`K=V` environment (repeatable)")
	flag.Var(&o.labels, "label", "`K=V` image label (repeatable)")
	flag.Var(&o.chown, "chown", "`PATH=UID:GID` owner of a path in the layers (repeatable)")
	flag.Var(&o.caps, "file-cap", "`PATH=CAP[,CAP]` file capabilities (+ep), e.g. /coredns=net_bind_service")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "oci-image: %v\n", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.out == "" || o.ref == "" || o.created == "" || len(o.layers) == 0 {
		return fmt.Errorf("--out, --ref, --created and at least one --layer are required")
	}
	created, err := time.Parse(time.RFC3339, o.created)
	if err != nil {
		return fmt.Errorf("--created %q: %w", o.created, err)
	}
	meta, err := parseMeta(o)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "oci-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	layers, err := buildLayers(o.layers, meta, created.UTC(), tmp)
	if err != nil {
		return err
	}
	if unused := meta.unused(); len(unused) > 0 {
		return fmt.Errorf("--chown/--file-cap name paths that no layer holds: %s", strings.Join(unused, ", "))
	}
	img, err := assemble(o, layers, created.UTC())
	if err != nil {
		return err
	}
	summary, err := writeArchive(o, img, created.UTC(), tmp)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(summary)
}
