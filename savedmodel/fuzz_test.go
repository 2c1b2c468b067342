package savedmodel_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/structtensor/structtensor-go/cops/copstest"
	"github.com/structtensor/structtensor-go/savedmodel"
)

// FuzzReadMetadata parses arbitrary bytes as assets/dataview.json next to
// a real saved_model.pb: ReadMetadata must return an error or metadata,
// never panic, and accept nothing whose fingerprint does not match.
func FuzzReadMetadata(f *testing.F) {
	dir, _ := export(f, copstest.Descriptors(f), "structtensor.testdata.recipe.Recipe", "title", "ingredients.name")
	good, err := os.ReadFile(filepath.Join(dir, "assets", savedmodel.MetadataFile))
	if err != nil {
		f.Fatal(err)
	}
	sm, err := os.ReadFile(filepath.Join(dir, "saved_model.pb"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format":"structtensor.dataview","version":1}`))
	f.Add([]byte(`{"format":"structtensor.dataview","version":3,"spec":{}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, meta []byte) {
		d := t.TempDir()
		if err := os.MkdirAll(filepath.Join(d, "assets"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "assets", savedmodel.MetadataFile), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "saved_model.pb"), sm, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := savedmodel.ReadMetadata(d)
		if err != nil {
			return
		}
		if m.Format != savedmodel.Format || m.Version != savedmodel.FormatVersion {
			t.Fatalf("accepted format %q version %d", m.Format, m.Version)
		}
	})
}
