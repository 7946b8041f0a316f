package selector

import (
	"encoding/json"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

func TestFitFeatures(t *testing.T) {
	weather := pipeline.Tool{Name: "get_current_weather", Description: "Get the current weather in a location.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"]}`)}
	stock := pipeline.Tool{Name: "get_stock_price", Description: "Get a company's stock price.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"ticker":{"type":"string"}},"required":["ticker"]}`)}
	cands := []Candidate{
		{Name: "get_current_weather", Score: map[string]float64{ScoreSimilarity: 0.6, ScoreCoverage: 0.5}},
		{Name: "get_stock_price", Score: map[string]float64{ScoreSimilarity: 0.2, ScoreCoverage: 0.1}},
	}
	req := "What's the weather like in Boston in celsius?"
	x := FitFeatures(req, cands, 0, weather)
	if x[FitAsks] != 1 || x[FitNamedShare] != 1 {
		t.Errorf("weather: asks %v named share %v, want 1 1", x[FitAsks], x[FitNamedShare])
	}
	if d := x[FitSimilarityGap]; d < 0.39 || d > 0.41 {
		t.Errorf("similarity gap %v, want 0.4", d)
	}
	if x[FitQuestion] != 1 {
		t.Errorf("question %v, want 1 for %q", x[FitQuestion], req)
	}
	if x[FitEvidenceShare] == 0 {
		t.Errorf("no evidence found for the unit or location in %q", req)
	}
	y := FitFeatures(req, cands, 1, stock)
	if y[FitAsks] != 0 || y[FitNamedShare] != 0 || y[FitToolCoverage] != 0 {
		t.Errorf("stock: asks %v named %v tool coverage %v, want 0 0 0", y[FitAsks], y[FitNamedShare], y[FitToolCoverage])
	}
	if y[FitSimilarityGap] >= 0 {
		t.Errorf("stock similarity gap %v, want negative", y[FitSimilarityGap])
	}
	if DefaultFitModel.Prob(x) <= DefaultFitModel.Prob(y) {
		t.Errorf("the weather tool (%.3f) should fit the weather request better than the stock tool (%.3f)", DefaultFitModel.Prob(x), DefaultFitModel.Prob(y))
	}
}

func TestFitModelZeroAcceptsAll(t *testing.T) {
	var x [NumFitFeatures]float64
	for i := range x {
		x[i] = -5
	}
	if !NoFitOff.Fits(x) {
		t.Error("NoFitOff refused a candidate")
	}
}
