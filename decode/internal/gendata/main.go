// Command gendata writes testdata/decode/recipes.tfrecord, the recipe
// records "structtensor demo" decodes: three recipes of the schema
// structtensor.testdata.recipe.Recipe (testdata/proto/recipe.proto),
// serialized deterministically, in an uncompressed TFRecord file.
//
// Run from the module root after go run ./decode/internal/gendesc:
//
//	go run ./decode/internal/gendata
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/structtensor/structtensor-go/tfrecord"
)

type ingredient struct {
	name   string
	amount float32
	unit   string
}

type rating struct {
	user      string
	rating    int32
	embedding []float32
}

type tool struct {
	name     string
	electric *bool
}

type step struct {
	instruction string
	minutes     int32
	tools       []tool
}

type recipe struct {
	title       string
	servings    int32
	tags        []string
	ingredients []ingredient
	ratings     []rating
	steps       []step
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

var recipes = []recipe{{
	title: "Snickerdoodle cookies", servings: 24, tags: []string{"baking", "dessert"},
	ingredients: []ingredient{{"flour", 3, "cup"}, {"white sugar", 1, "cup"}, {"butter", 1, "cup"}, {"cinnamon", 1, "teaspoon"}},
	ratings:     []rating{{"alice", 5, []float32{0.7, 2.0, 0.3}}, {"bob", 4, []float32{0.1, 0.9, 1.5}}},
	steps: []step{
		{"Preheat the oven to 350 F.", 10, []tool{{"oven", yes()}}},
		{"Cream the butter and sugar.", 5, []tool{{"mixer", yes()}, {"bowl", no()}}},
		{"Roll balls in cinnamon sugar and bake.", 10, []tool{{"baking sheet", nil}}},
	},
}, {
	title: "Green salad", servings: 2, tags: []string{"quick"},
	ingredients: []ingredient{{"lettuce", 1, "head"}, {"olive oil", 2, "tablespoon"}},
	steps:       []step{{"Toss everything in a bowl.", 2, nil}},
}, {
	title: "Bread", servings: 8,
	ingredients: []ingredient{{"flour", 500, "g"}, {"water", 350, "ml"}, {"yeast", 7, "g"}, {"salt", 10, "g"}},
	ratings:     []rating{{"carol", 3, nil}},
	steps: []step{
		{"Knead the dough.", 10, []tool{{"stand mixer", yes()}}},
		{"Let it rise.", 90, nil},
		{"Bake.", 40, []tool{{"oven", yes()}, {"dutch oven", no()}}},
	},
}}

func main() {
	descPath := flag.String("descriptors", "testdata/proto/testdata.pb", "FileDescriptorSet of the test schemas")
	out := flag.String("out", "testdata/decode/recipes.tfrecord", "TFRecord file to write")
	flag.Parse()
	b, err := os.ReadFile(*descPath)
	if err != nil {
		log.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		log.Fatal(err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := tfrecord.NewWriter(f)
	for _, r := range recipes {
		rec, err := proto.MarshalOptions{Deterministic: true}.Marshal(build(files, r))
		if err != nil {
			log.Fatal(err)
		}
		if err := w.Write(rec); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %s: %d recipes\n", *out, len(recipes))
}

func newMsg(files *protoregistry.Files, name string) *dynamicpb.Message {
	d, err := files.FindDescriptorByName(protoreflect.FullName("structtensor.testdata.recipe." + name))
	if err != nil {
		log.Fatal(err)
	}
	return dynamicpb.NewMessage(d.(protoreflect.MessageDescriptor))
}

func set(m *dynamicpb.Message, field string, v any) {
	m.Set(m.Descriptor().Fields().ByName(protoreflect.Name(field)), protoreflect.ValueOf(v))
}

func add(m *dynamicpb.Message, field string, v any) {
	m.Mutable(m.Descriptor().Fields().ByName(protoreflect.Name(field))).List().Append(protoreflect.ValueOf(v))
}

func build(files *protoregistry.Files, r recipe) *dynamicpb.Message {
	m := newMsg(files, "Recipe")
	set(m, "title", r.title)
	set(m, "servings", r.servings)
	for _, t := range r.tags {
		add(m, "tags", t)
	}
	for _, in := range r.ingredients {
		x := newMsg(files, "Ingredient")
		set(x, "name", in.name)
		set(x, "amount", in.amount)
		set(x, "unit", in.unit)
		add(m, "ingredients", x)
	}
	for _, rt := range r.ratings {
		x := newMsg(files, "UserRating")
		set(x, "user", rt.user)
		set(x, "rating", rt.rating)
		for _, e := range rt.embedding {
			add(x, "user_embedding", e)
		}
		add(m, "ratings", x)
	}
	for _, s := range r.steps {
		x := newMsg(files, "Step")
		set(x, "instruction", s.instruction)
		set(x, "minutes", s.minutes)
		for _, t := range s.tools {
			y := newMsg(files, "Tool")
			set(y, "name", t.name)
			if t.electric != nil {
				set(y, "electric", *t.electric)
			}
			add(x, "tools", y)
		}
		add(m, "steps", x)
	}
	return m
}
