package savedmodel

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/structtensor/structtensor-go/savedmodel/internal/objectgraph"
)

// layout is what a directory the loaders read may hold: the files and
// directories allowed, the one file that must be there, and the sentinel
// error its refusals wrap.
type layout struct {
	what     string // for messages: "a DataView"
	refused  error  // ErrFormat, ErrModel
	dirOK    func(rel string) bool
	fileOK   func(rel string) bool
	required string
}

// dataViewLayout is a DataView's: exactly its files (expectedFiles), in
// variables/ and assets/. The other files a DataView needs are required
// once its metadata's version is known (requireFiles).
var dataViewLayout = layout{
	what:     "a DataView",
	refused:  ErrFormat,
	dirOK:    func(rel string) bool { return rel == "variables" || rel == objectgraph.AssetsDir },
	fileOK:   func(rel string) bool { return expectedFiles[rel] },
	required: objectgraph.AssetsDir + "/" + MetadataFile,
}

// modelLayout is any SavedModel's (see Load): saved_model.pb, optionally
// fingerprint.pb, the files of variables/ and whatever assets/ and
// assets.extra/ hold.
var modelLayout = layout{
	what:    "a SavedModel",
	refused: ErrModel,
	dirOK: func(rel string) bool {
		top, _, nested := strings.Cut(rel, "/")
		return top == objectgraph.AssetsDir || top == "assets.extra" || top == "variables" && !nested
	},
	fileOK: func(rel string) bool {
		return strings.Contains(rel, "/") || rel == objectgraph.SavedModelFile || rel == "fingerprint.pb"
	},
	required: objectgraph.SavedModelFile,
}

// maxDirFiles bounds the number of files the loaders read.
const maxDirFiles = 4096

// readDir reads every file of the directory dir, laid out as l, with the
// checks every loader makes before anything of it runs, and returns the
// files by slash-separated path and their digest (digestOf):
//
//   - only regular files: a symbolic link (even to a file inside), a
//     FIFO, a device or a socket is refused before it is read, and each
//     file is read through a descriptor opened without following links
//     and without blocking, checked to be a regular file;
//   - only the files and directories l allows, at most maxDirFiles
//     files, and l's required file present;
//   - each file at most o.maxBytes;
//   - the digest the caller pinned (o.digest, ErrFingerprint).
//
// Every refusal wraps l.refused (ErrFingerprint for the digest).
func readDir(dir string, l layout, o loadOptions) (map[string][]byte, string, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %s: %s is a symbolic link; %s is read from regular files only", l.refused, dir, rel, l.what)
		case d.IsDir():
			if !l.dirOK(rel) {
				return fmt.Errorf("%w: %s: unexpected directory %s", l.refused, dir, rel)
			}
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%w: %s: %s is not a regular file (%v)", l.refused, dir, rel, d.Type())
		case !l.fileOK(rel):
			return fmt.Errorf("%w: %s: unexpected file %s", l.refused, dir, rel)
		case len(files) == maxDirFiles:
			return fmt.Errorf("%w: %s: more than %d files", l.refused, dir, maxDirFiles)
		}
		b, err := readRegular(p, o.maxBytes)
		if err != nil {
			return fmt.Errorf("%w: %s: %s: %v", l.refused, dir, rel, err)
		}
		files[rel] = b
		return nil
	})
	if err != nil {
		if errors.Is(err, l.refused) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("%w: %s: %v", l.refused, dir, err)
	}
	if _, ok := files[l.required]; !ok {
		return nil, "", fmt.Errorf("%w: %s: %s is missing", l.refused, dir, l.required)
	}
	digest := digestOf(files)
	if o.digest != "" && o.digest != digest {
		return nil, "", fmt.Errorf("%w: %s: the digest of %s is %s, the caller pinned %s", ErrFingerprint, dir, l.what, digest, o.digest)
	}
	return files, digest, nil
}

// readRegular reads the file name if it is a regular file of at most
// maxBytes: opened without following a link and without blocking (a FIFO
// swapped in after the walk), checked, and read no further than the limit
// (a file that grows meanwhile).
func readRegular(name string, maxBytes int64) ([]byte, error) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%v)", st.Mode().Type())
	}
	if st.Size() > maxBytes {
		return nil, fmt.Errorf("%d bytes, more than the limit of %d", st.Size(), maxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxBytes+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > maxBytes {
		return nil, fmt.Errorf("grew past the limit of %d bytes", maxBytes)
	}
	return b, nil
}
