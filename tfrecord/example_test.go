package tfrecord_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/structtensor/structtensor-go/tfrecord"
)

func Example() {
	var file bytes.Buffer
	w := tfrecord.NewWriter(&file, tfrecord.Options{Compression: tfrecord.CompressionGzip})
	for _, rec := range []string{"alpha", "beta", "gamma"} {
		if err := w.Write([]byte(rec)); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// Read it back in batches: one buffer and offsets per batch.
	r := tfrecord.NewReader(&file, tfrecord.Options{Compression: tfrecord.CompressionAuto})
	var batch tfrecord.Batch
	for {
		err := r.ReadBatch(&batch, 2)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("batch from record %d: %d records, offsets %v, data %q\n",
			batch.Start, batch.Len(), batch.Offsets, batch.Data)
	}
	// Output:
	// batch from record 0: 2 records, offsets [0 5 9], data "alphabeta"
	// batch from record 2: 1 records, offsets [0 5], data "gamma"
}

func ExampleNewDelimitedReader() {
	var buf bytes.Buffer
	w := tfrecord.NewDelimitedWriter(&buf)
	w.Write([]byte("one"))
	w.Write([]byte("two"))
	w.Close()
	fmt.Printf("% x\n", buf.Bytes())

	r := tfrecord.NewDelimitedReader(&buf)
	for {
		rec, err := r.Next()
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Printf("%s\n", rec)
	}
	// Output:
	// 03 6f 6e 65 03 74 77 6f
	// one
	// two
	// EOF
}

func ExampleRecordError() {
	var buf bytes.Buffer
	w := tfrecord.NewWriter(&buf)
	w.Write([]byte("good"))
	w.Write([]byte("damaged"))
	w.Close()
	data := buf.Bytes()
	data[len(data)-6] ^= 1 // a byte inside the second record's data

	r := tfrecord.NewReader(bytes.NewReader(data))
	for {
		rec, err := r.Next()
		var re *tfrecord.RecordError
		if errors.As(err, &re) {
			fmt.Printf("record %d at byte offset %d: corrupt %v, truncated %v\n",
				re.Index, re.Offset, errors.Is(err, tfrecord.ErrCorrupt), errors.Is(err, tfrecord.ErrTruncated))
			break
		}
		fmt.Printf("%s\n", rec)
	}
	// Output:
	// good
	// record 1 at byte offset 20: corrupt true, truncated false
}

// All ranges over the records of a stream; a corrupt record ends the loop
// with its error.
func ExampleReader_All() {
	var file bytes.Buffer
	w := tfrecord.NewWriter(&file)
	for _, rec := range []string{"alpha", "beta"} {
		if err := w.Write([]byte(rec)); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	good := bytes.Clone(file.Bytes())
	for rec, err := range tfrecord.NewReader(bytes.NewReader(good)).All() {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s\n", rec)
	}
	bad := bytes.Clone(good)
	bad[len(bad)-6] ^= 1 // a byte of the last record's data
	r := tfrecord.NewReader(bytes.NewReader(bad))
	for rec, err := range r.All() {
		if err != nil {
			fmt.Println("record", r.Index(), errors.Is(err, tfrecord.ErrCorrupt))
			break
		}
		fmt.Printf("%s\n", rec)
	}
	// Output:
	// alpha
	// beta
	// alpha
	// record 1 true
}
