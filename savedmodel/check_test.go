package savedmodel_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/savedmodel"
	"github.com/structtensor/structtensor-go/savedmodel/internal/bundle"
	"github.com/structtensor/structtensor-go/structtensor"
	attrpb "github.com/wamuir/graft/tensorflow/core/framework/attr_value_go_proto"
	nodepb "github.com/wamuir/graft/tensorflow/core/framework/node_def_go_proto"
	metapb "github.com/wamuir/graft/tensorflow/core/protobuf/for_core_protos_go_proto"
	"google.golang.org/protobuf/proto"
)

const (
	recipeMessage  = "structtensor.testdata.recipe.Recipe"
	exampleMessage = "structtensor.testdata.example.Example"
	smFile         = "saved_model.pb"
	metaFile       = "assets/dataview.json"
	indexFile      = "variables/variables.index"
	dataFile       = "variables/variables.data-00000-of-00001"
	trFile         = "assets/" + savedmodel.TensorRepresentationsFile
	trTextFile     = "assets/" + savedmodel.TensorRepresentationsTextFile
)

// editMeta rewrites dataview.json through edit (on its JSON object) and
// then recomputes the fingerprint of every file, as someone who edits a
// DataView can.
func editMeta(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, metaFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	files := map[string]any{}
	for _, f := range []string{smFile, indexFile, dataFile, trFile, trTextFile} {
		c, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		sum := sha256.Sum256(c)
		files[f] = hex.EncodeToString(sum[:])
	}
	m["fingerprint"] = map[string]any{"algorithm": "sha256", "files": files}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

func editSavedModel(t *testing.T, dir string, edit func(mg *metapb.MetaGraphDef)) {
	t.Helper()
	p := filepath.Join(dir, smFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var sm metapb.SavedModel
	if err := proto.Unmarshal(b, &sm); err != nil {
		t.Fatal(err)
	}
	edit(sm.MetaGraphs[0])
	if b, err = proto.Marshal(&sm); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func replaceWithSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestLoaderRefusesAttacks edits DataViews the ways an attacker who can
// write the directory would, each time recomputing the fingerprint, and
// checks that LoadDataView refuses them before anything runs.
func TestLoaderRefusesAttacks(t *testing.T) {
	d := copstest.Descriptors(t)
	other, _ := export(t, d, exampleMessage)
	otherMeta, err := savedmodel.ReadMetadata(other)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		attack func(t *testing.T, dir string)
		want   error
		says   string
	}{
		{"init op writing a file", func(t *testing.T, dir string) {
			editSavedModel(t, dir, func(mg *metapb.MetaGraphDef) {
				mg.GraphDef.Node = append(mg.GraphDef.Node, &nodepb.NodeDef{Name: "evil", Op: "WriteFile", Input: []string{"dataview_asset", "dataview_asset"}})
				mg.CollectionDef = map[string]*metapb.CollectionDef{"saved_model_main_op": {Kind: &metapb.CollectionDef_NodeList_{NodeList: &metapb.CollectionDef_NodeList{Value: []string{"evil"}}}}}
			})
			editMeta(t, dir, nil)
		}, savedmodel.ErrGraph, "WriteFile"},
		{"init signature of allowed ops", func(t *testing.T, dir string) {
			editSavedModel(t, dir, func(mg *metapb.MetaGraphDef) {
				mg.GraphDef.Node = append(mg.GraphDef.Node, &nodepb.NodeDef{Name: "init", Op: "NoOp"})
				mg.SignatureDef["__saved_model_init_op"] = &metapb.SignatureDef{Outputs: map[string]*metapb.TensorInfo{"__saved_model_init_op": {Encoding: &metapb.TensorInfo_Name{Name: "init"}}}}
			})
			editMeta(t, dir, nil)
		}, savedmodel.ErrGraph, "graph differs"},
		{"graph of another message", func(t *testing.T, dir string) {
			for _, f := range []string{smFile, indexFile, dataFile, trFile, trTextFile} {
				copyFile(t, filepath.Join(other, f), filepath.Join(dir, f))
			}
			editMeta(t, dir, nil)
		}, savedmodel.ErrGraph, ""},
		{"plan attribute edited", func(t *testing.T, dir string) {
			editSavedModel(t, dir, func(mg *metapb.MetaGraphDef) {
				for _, f := range mg.GraphDef.Library.Function {
					for _, n := range f.NodeDef {
						if a, ok := n.Attr["plan"]; ok {
							n.Attr["plan"] = &attrpb.AttrValue{Value: &attrpb.AttrValue_S{S: append(a.GetS(), 0)}}
						}
					}
				}
			})
			editMeta(t, dir, nil)
		}, savedmodel.ErrGraph, ""},
		{"plan in metadata edited", func(t *testing.T, dir string) {
			editMeta(t, dir, func(m map[string]any) { m["plan"] = otherMeta.Plan })
		}, savedmodel.ErrGraph, "message"},
		{"message edited", func(t *testing.T, dir string) {
			editMeta(t, dir, func(m map[string]any) { m["message"] = exampleMessage })
		}, savedmodel.ErrGraph, "message"},
		{"components edited", func(t *testing.T, dir string) {
			editMeta(t, dir, func(m map[string]any) {
				c := m["components"].([]any)
				c[0], c[1] = c[1], c[0]
			})
		}, savedmodel.ErrGraph, ""},
		{"signatures edited", func(t *testing.T, dir string) {
			editMeta(t, dir, func(m map[string]any) { m["signatures"] = []string{"decode"} })
		}, savedmodel.ErrGraph, "signatures"},
		{"tensor representations of another message", func(t *testing.T, dir string) {
			copyFile(t, filepath.Join(other, trFile), filepath.Join(dir, trFile))
			editMeta(t, dir, nil)
		}, savedmodel.ErrGraph, "TensorRepresentationGroup"},
		{"tensor representations text edited", func(t *testing.T, dir string) {
			b, err := os.ReadFile(filepath.Join(dir, trTextFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, trTextFile), []byte(strings.Replace(string(b), "INT64", "INT32", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			editMeta(t, dir, nil)
		}, savedmodel.ErrGraph, "TensorRepresentationGroup"},
		{"symlink out of the directory", func(t *testing.T, dir string) {
			replaceWithSymlink(t, outside, filepath.Join(dir, dataFile))
		}, savedmodel.ErrFormat, "symbolic link"},
		{"saved_model.pb links to /dev/zero", func(t *testing.T, dir string) {
			replaceWithSymlink(t, "/dev/zero", filepath.Join(dir, smFile))
		}, savedmodel.ErrFormat, "symbolic link"},
		{"dataview.json is a FIFO", func(t *testing.T, dir string) {
			p := filepath.Join(dir, metaFile)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, savedmodel.ErrFormat, "not a regular file"},
		{"missing checkpoint", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, indexFile)); err != nil {
				t.Fatal(err)
			}
		}, savedmodel.ErrFormat, "variables.index is missing"},
		{"foreign object graph in the checkpoint", func(t *testing.T, dir string) {
			og, err := structtensor.NewTensor(structtensor.Shape{}, [][]byte{{0x0a, 0x00}})
			if err != nil {
				t.Fatal(err)
			}
			if err := bundle.Write(filepath.Join(dir, "variables", "variables"), map[string]*structtensor.Tensor{bundle.ObjectGraphKey: og}); err != nil {
				t.Fatal(err)
			}
			editMeta(t, dir, nil)
		}, savedmodel.ErrGraph, "checkpoint"},
		{"file over the size limit", func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, dataFile), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(savedmodel.DefaultMaxFileBytes + 1); err != nil {
				t.Fatal(err)
			}
		}, savedmodel.ErrFormat, "limit"},
		{"unexpected file", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "fingerprint.pb"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, savedmodel.ErrFormat, "unexpected file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := export(t, d, recipeMessage)
			c.attack(t, dir)
			dv, err := savedmodel.LoadDataView(dir)
			if err == nil {
				dv.Close()
				t.Fatal("LoadDataView succeeded")
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("err = %v, want %v mentioning %q", err, c.want, c.says)
			}
		})
	}
}

func TestPinnedDigest(t *testing.T) {
	dir, _ := export(t, copstest.Descriptors(t), recipeMessage)
	digest, err := savedmodel.Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	dv, err := savedmodel.LoadDataView(dir, savedmodel.LoadOptions{Digest: digest})
	if err != nil {
		t.Fatal(err)
	}
	if dv.Digest() != digest {
		t.Errorf("Digest() = %s, want %s", dv.Digest(), digest)
	}
	dv.Close()
	// A valid re-export with other options is a different DataView.
	editMeta(t, dir, func(m map[string]any) { m["tensorflow_version"] = "0.0.0" })
	if _, err := savedmodel.LoadDataView(dir, savedmodel.LoadOptions{Digest: digest}); !errors.Is(err, savedmodel.ErrFingerprint) {
		t.Errorf("edited metadata under a pinned digest: err = %v, want ErrFingerprint", err)
	}
	if _, err := savedmodel.LoadDataView(dir); err != nil {
		t.Errorf("without the pinned digest the edit (a version string) is harmless: %v", err)
	}
}

// TestOldFormatRefused makes DataViews of the earlier format versions (1:
// a TF1-style graph with its metadata; 2: without the TensorRepresentation
// assets) and checks the error says how to re-export.
func TestOldFormatRefused(t *testing.T) {
	for _, version := range []int{1, 2} {
		dir, _ := export(t, copstest.Descriptors(t), recipeMessage)
		for _, f := range []string{trFile, trTextFile} {
			if err := os.Remove(filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		editMeta(t, dir, func(m map[string]any) { m["version"] = version })
		_, err := savedmodel.LoadDataView(dir)
		if !errors.Is(err, savedmodel.ErrOldFormat) || !strings.Contains(err.Error(), "dataview export --descriptor-set FILE --message "+recipeMessage) {
			t.Errorf("version %d: err = %v, want ErrOldFormat saying how to re-export", version, err)
		}
	}
}

func FuzzCheckFiles(f *testing.F) {
	d := copstest.Descriptors(f)
	dir, _ := export(f, d, recipeMessage)
	files := map[string][]byte{}
	for _, name := range []string{smFile, metaFile, indexFile, dataFile, trFile, trTextFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		files[name] = b
	}
	f.Add(files[smFile], files[metaFile])
	f.Add(files[smFile][:len(files[smFile])/2], []byte(`{"format":"structtensor.dataview","version":3}`))
	f.Fuzz(func(t *testing.T, sm, meta []byte) {
		// Recompute the fingerprint of the fuzzed saved_model.pb, so that
		// the graph checks, not only the fingerprint, see the input.
		var m map[string]any
		if json.Unmarshal(meta, &m) == nil && m != nil {
			fp := map[string]any{}
			for _, name := range []string{indexFile, dataFile, trFile, trTextFile} {
				sum := sha256.Sum256(files[name])
				fp[name] = hex.EncodeToString(sum[:])
			}
			sum := sha256.Sum256(sm)
			fp[smFile] = hex.EncodeToString(sum[:])
			m["fingerprint"] = map[string]any{"algorithm": "sha256", "files": fp}
			meta, _ = json.Marshal(m)
		}
		in := map[string][]byte{smFile: sm, metaFile: meta}
		for _, name := range []string{indexFile, dataFile, trFile, trTextFile} {
			in[name] = files[name]
		}
		err := savedmodel.CheckFiles(in)
		if err == nil {
			return
		}
		for _, want := range []error{savedmodel.ErrFormat, savedmodel.ErrGraph, savedmodel.ErrFingerprint, savedmodel.ErrOldFormat} {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("error wraps no sentinel: %v", err)
	})
}
