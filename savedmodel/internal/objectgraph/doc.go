// Package objectgraph writes object-based (TF2) SavedModels without
// Python: the saved_model.pb and checkpoint that tf.saved_model.load
// restores as Python objects, and that TensorFlow's C API and TF Serving
// load as a graph with signatures.
//
// # API
//
// A Model is a graph whose library holds FunctionDefs (tfbridge's
// Graph.ToFunctionDef turns a Go-built graph into one), a tree of
// Objects and a map of signatures:
//
//	m := &objectgraph.Model{
//		Tags: []string{"serve"}, TensorFlowVersion: tfbridge.Version(),
//		Graph: graphDefWithLibrary,
//		Root: &objectgraph.Object{Children: []objectgraph.Child{
//			{Name: "decode_fun", Object: &objectgraph.Object{Function: &objectgraph.Function{
//				Name: "decode_fn", Inputs: []objectgraph.Arg{{Name: "records", Spec: records}},
//				Output: objectgraph.Dict{"a.b": objectgraph.RaggedTensorSpec{...}}}}},
//			{Name: "w", Object: &objectgraph.Object{Variable: &objectgraph.Variable{Name: "w", Value: tensor}}},
//		}},
//		Signatures: map[string]*objectgraph.Function{"serving_default": {..., KeywordOnly: true}},
//	}
//	err := objectgraph.Write(dir, m)       // or objectgraph.Files(m) for the bytes
//
// Objects are user objects (attributes of the loaded object are its
// named Children), concrete functions (callable attributes) or variables
// (tf.Variable attributes, their values stored in the checkpoint). A
// Function names its FunctionDef and gives its inputs (TensorSpecs, named
// by keyword; composite arguments pass their components), its output structure (a Value: Dict, Tuple, List, None,
// TensorSpec, RaggedTensorSpec or any TypeSpec by its proto parts) and the
// variables it captures, which its FunctionDef takes as trailing resource
// inputs. The FunctionDef's outputs are the output structure flattened as
// TensorFlow's nest.flatten does with composites expanded (Flatten): dict
// entries in sorted key order, a RaggedTensor as its flat values then its
// row splits, outermost first. Files checks every function against its
// FunctionDef (inputs, captures, output count and types) and fails with
// ErrModel otherwise.
//
// # What is written
//
// saved_model.pb holds one MetaGraphDef with:
//
//   - object_graph_def: the objects numbered breadth first from the root
//     (node 0) as TensorFlow's saver numbers them, plus the root's
//     "signatures" child (a "signature_map" object with one function per
//     signature), and for every function its canonicalized input
//     signature ((args), {kwargs}), output signature and bound inputs,
//     encoded as TensorFlow's struct.proto encodes nested structures;
//   - graph_def: the library and the caller's nodes, plus what TF1-style
//     loaders run: a VarHandleOp per variable, a saver (filename
//     placeholder, RestoreV2 and AssignVariableOps, a NoOp when there are
//     no variables) named by saver_def, and per signature its input
//     placeholders and one (Stateful)PartitionedCall of its function;
//   - signature_def: each signature over those nodes, composite outputs
//     (RaggedTensors) as composite_tensor TensorInfos.
//
// variables/variables.{index,data-00000-of-00001} is a TensorBundle
// (package bundle) holding the TrackableObjectGraph (the same tree, with
// each variable's checkpoint key) under "_CHECKPOINTABLE_OBJECT_GRAPH",
// and each variable's value under "<path>/.ATTRIBUTES/VARIABLE_VALUE",
// the path being the child names from the root escaped as TensorFlow
// escapes them ("." doubled, "/" as ".S"). TensorFlow's TF2 loader needs
// this checkpoint even when there are no variables.
//
// No fingerprint.pb is written: TensorFlow's holds hashes of its own
// regularized protos, which a writer outside TensorFlow cannot reproduce
// faithfully, and loaders do not require it.
package objectgraph
