package train

import (
	"runtime"

	"github.com/toolrag/mcp-gateway/lab/rank"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// BaseTokenizerModule is the Go module whose tokenizer.json (the BERT
// uncased WordPiece vocabulary of all-MiniLM-L6-v2, Apache-2.0) seeds the
// vocabulary. Only that file is read; the module is not imported.
const (
	BaseTokenizerModule = "github.com/clems4ever/all-minilm-l6-v2-go@v0.0.9"
	baseTokenizerPath   = "all_minilm_l6_v2/tokenizer.json"
)

// DevDatasets are the ../shared/train folders kept out of training: their
// tools make the real-MCP DEV catalog (lab/eval RealMCPDatasets), whose
// servers the model must not have seen. `toolrag-lab train` excludes them
// unless --exclude says otherwise.
var DevDatasets = []string{"docker_mcp_registry", "taubench", "tooltalk"}

// DefaultDatasetWeights returns the weights Options.DatasetWeight takes
// when nil (a fresh map).
func DefaultDatasetWeights() map[string]float64 {
	return map[string]float64{"clinc150": 0.5, "hwu64": 0.5}
}

// Options configure a training run. Zero values take the defaults noted.
type Options struct {
	TrainDir string // folder of datasets (tools.jsonl + pairs.jsonl each); required
	// Extra are more dataset folders (tools.jsonl + pairs.jsonl), each
	// named by its base name: lab/data/mcpagent in the shipped recipe.
	Extra  []string
	OutDir string // where the model directory is written; empty = do not write
	// BaseTokenizer is a BERT-style tokenizer.json whose vocabulary is
	// pruned to the training text. Empty: the file from BaseTokenizerModule,
	// located (and downloaded if needed) with `go mod download -json`.
	BaseTokenizer string

	Dim           int     // embedding dimension; 512
	Epochs        int     // passes over the (capped) examples; 8
	Seed          uint64  // 1
	Threads       int     // GOMAXPROCS
	BatchSize     int     // examples per step; 256
	LearningRate  float64 // Adam step; 0.01
	Temperature   float64 // softmax temperature over cosines; 0.05
	HardNegatives int     // BM25 negatives per example; 4 (negative: none)
	// OneWay trains only the query → documents direction of the loss; by
	// default the document → queries direction is added (half weight
	// each).
	OneWay   bool
	HardPool int // drawn from the top HardPool BM25 hits; 20
	// ServerNegatives reserves up to this many places of the hard pool of
	// a query whose tool names its server (tools.jsonl "server") for the
	// other tools of that server, best BM25 match first: the siblings an
	// agent must tell apart (list_coupons vs create_coupon); 10
	// (negative: none).
	ServerNegatives int
	MaxPerTool      int // examples per tool and epoch; 24
	// WordNetDir is a WordNet 3.0 database folder (data.noun, ...) whose
	// (definition → synonyms and hypernyms) pairs are mixed into training
	// to teach general word relations; "" means none.
	WordNetDir string
	// WordNetPerEpoch is the number of WordNet pairs drawn per epoch; 6000.
	WordNetPerEpoch int
	HoldOut         float64 // share of labelled tools held out per dataset; 0.1 (negative: none)
	MinCount        int     // minimum uses of a token to keep it; 2
	// WordTokens, when positive, adds to the base vocabulary every word
	// of the training text used at least WordTokens times that the base
	// tokenizer splits into several pieces; 0: none.
	WordTokens int
	SVDDim     int // dimensions of the LSA (SVD) part of the init; Dim/2 (negative: none)
	// Teacher is a JSON-lines file of a sentence encoder's vectors of the
	// training text ({"t": text, "v": [...]}, texts cut at 600 runes, as
	// `toolrag-lab distill --texts` writes them). When set, each query's
	// target over the batch's documents mixes the one-hot positive with
	// the teacher's softmax over the same documents (share
	// TeacherWeight, temperature TeacherTemperature). "": none.
	Teacher            string
	TeacherWeight      float64 // 0.3
	TeacherTemperature float64 // 0.05
	DType              model2vec.DType
	Exclude            []string // dataset folders to leave out
	// HashWeight trains the table as the residual over the hashing
	// embedder's features at this weight: scores are those of the fused
	// embedding embed.NewBuiltinWith(BuiltinConfig{HashWeight: w}) serves
	// (see lexical). Default 0.5 (embed.DefaultHashWeight); negative: the
	// model alone. The weight is recorded in the model's metadata
	// ("hash_weight").
	HashWeight float64
	// DatasetWeight scales the per-tool cap of a dataset; missing datasets
	// count 1. A weight w > 1 also repeats each example of the dataset
	// round(w) times per epoch (up to the raised cap), so small datasets
	// weigh more. nil means {"clinc150": 0.5, "hwu64": 0.5}: the two
	// intent sets with synthetic descriptions count half.
	DatasetWeight map[string]float64
}

func (o *Options) defaults() {
	if o.Dim <= 0 {
		o.Dim = 512
	}
	if o.Epochs <= 0 {
		o.Epochs = 8
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 256
	}
	if o.LearningRate <= 0 {
		o.LearningRate = 0.01
	}
	if o.Temperature <= 0 {
		o.Temperature = 0.05
	}
	if o.HardNegatives < 0 {
		o.HardNegatives = 0
	} else if o.HardNegatives == 0 {
		o.HardNegatives = 4
	}
	if o.HardPool <= 0 {
		o.HardPool = 20
	}
	if o.ServerNegatives == 0 {
		o.ServerNegatives = 10
	} else if o.ServerNegatives < 0 {
		o.ServerNegatives = 0
	}
	o.ServerNegatives = min(o.ServerNegatives, o.HardPool)
	if o.MaxPerTool <= 0 {
		o.MaxPerTool = 24
	}
	if o.WordNetPerEpoch <= 0 {
		o.WordNetPerEpoch = 6000
	}
	if o.HoldOut == 0 {
		o.HoldOut = 0.1
	} else if o.HoldOut < 0 {
		o.HoldOut = 0
	}
	if o.MinCount <= 0 {
		o.MinCount = 3
	}
	if o.DatasetWeight == nil {
		o.DatasetWeight = DefaultDatasetWeights()
	}
	if o.SVDDim == 0 {
		o.SVDDim = o.Dim / 2
	} else if o.SVDDim < 0 {
		o.SVDDim = 0
	}
	if o.SVDDim > o.Dim {
		o.SVDDim = o.Dim
	}
	if o.TeacherWeight <= 0 {
		o.TeacherWeight = 0.3
	}
	if o.TeacherTemperature <= 0 {
		o.TeacherTemperature = 0.05
	}
	if o.DType == "" {
		o.DType = model2vec.I8
	}
	if o.HashWeight == 0 {
		o.HashWeight = 0.5
	} else if o.HashWeight < 0 {
		o.HashWeight = 0
	}
}

// Result summarises a training run.
type Result struct {
	Model      *model2vec.Model
	Vocab      int
	BestEpoch  int
	Validation rank.Metrics            // on the held-out tools, best epoch, float table
	PerDataset map[string]rank.Metrics // validation by dataset
	LossStart  float64                 // mean loss of the first epoch
	LossEnd    float64                 // mean loss of the last epoch
	// QuantMaxErr and QuantMeanErr compare query–document cosines of the
	// saved (quantised) model with the float model (0 when not saved).
	QuantMaxErr, QuantMeanErr float64
}
