package main

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// Summary is what the caller records in its MANIFEST.
type Summary struct {
	Ref      string `json:"ref"`
	Digest   string `json:"digest"`
	Config   string `json:"config"`
	Archive  string `json:"archive"`
	Platform string `json:"platform"`
}

// writeArchive lays the image out as an OCI image layout and tars it. The
// index names the image the way containerd's own export does, which its import
// reads back: io.containerd.image.name = the full name, and
// org.opencontainers.image.ref.name = the tag.
func writeArchive(o options, img v1.Image, created time.Time, tmp string) (Summary, error) {
	name, tag, err := splitRef(o.ref)
	if err != nil {
		return Summary{}, err
	}
	dir := filepath.Join(tmp, "layout")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return Summary{}, err
	}
	osName, arch, _ := strings.Cut(o.platform, "/")
	err = p.AppendImage(img,
		layout.WithAnnotations(map[string]string{
			"io.containerd.image.name":          name + ":" + tag,
			"org.opencontainers.image.ref.name": tag,
			"org.opencontainers.image.created":  created.Format(time.RFC3339),
		}),
		layout.WithPlatform(v1.Platform{OS: osName, Architecture: arch}))
	if err != nil {
		return Summary{}, err
	}
	if err := tarFolder(dir, o.out, created); err != nil {
		return Summary{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return Summary{}, err
	}
	config, err := img.ConfigName()
	if err != nil {
		return Summary{}, err
	}
	return Summary{Ref: o.ref, Digest: digest.String(), Config: config.String(), Archive: o.out, Platform: o.platform}, nil
}

// splitRef: registry.k8s.io/pause:3.10.2 → (registry.k8s.io/pause, 3.10.2). A tag is required.
func splitRef(ref string) (string, string, error) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") || strings.Contains(ref, "@") {
		return "", "", fmt.Errorf("--ref %q: want NAME:TAG", ref)
	}
	return ref[:i], ref[i+1:], nil
}

// tarFolder writes the layout folder as a tar: sorted, 0:0, one mtime; written
// beside the target and renamed, so a failed run leaves no half archive.
func tarFolder(dir, out string, created time.Time) error {
	part := out + ".part"
	f, err := os.Create(part)
	if err != nil {
		return err
	}
	defer os.Remove(part)
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: created, Mode: 0o644, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if d.IsDir() {
			h.Name, h.Mode, h.Typeflag = h.Name+"/", 0o755, tar.TypeDir
			return tw.WriteHeader(h)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h.Size = info.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(tw, src)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(part, out)
}
