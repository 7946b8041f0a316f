package scoring

import (
	"math"
	"time"

	"gonum.org/v1/gonum/stat"
)

// LatencySample is one measured call for fitting a LatencyModel.
type LatencySample struct {
	Tool         string
	LatencyClass int // 0 instant … 3 long-running
	InputBytes   int
	Latency      time.Duration
}

// LatencyModel predicts a call's latency before it is made, from simple
// features, by least-squares lines (gonum stat.LinearRegression) in log
// space, where latencies are roughly normal:
//
//   - per tool with at least MinSamples calls of varying input size:
//     log(latency) = α + β·log(1+input bytes);
//   - otherwise, across all tools: log(latency) = α + β·latency class.
type LatencyModel struct {
	MinSamples int
	perTool    map[string][2]float64 // α, β
	global     [2]float64
	hasGlobal  bool
}

// FitLatency fits the model (MinSamples defaults to 5).
func FitLatency(samples []LatencySample) *LatencyModel {
	m := &LatencyModel{MinSamples: 5, perTool: map[string][2]float64{}}
	byTool := map[string][]LatencySample{}
	var xs, ys []float64
	for _, s := range samples {
		if s.Latency <= 0 {
			continue
		}
		byTool[s.Tool] = append(byTool[s.Tool], s)
		xs = append(xs, float64(s.LatencyClass))
		ys = append(ys, math.Log(float64(s.Latency)))
	}
	if len(xs) >= 2 {
		if variance(xs) > 0 {
			a, b := stat.LinearRegression(xs, ys, nil, false)
			m.global = [2]float64{a, b}
		} else {
			m.global = [2]float64{stat.Mean(ys, nil), 0}
		}
		m.hasGlobal = true
	} else if len(xs) == 1 {
		m.global = [2]float64{ys[0], 0}
		m.hasGlobal = true
	}
	for tool, ss := range byTool {
		if len(ss) < m.MinSamples {
			continue
		}
		tx := make([]float64, len(ss))
		ty := make([]float64, len(ss))
		for i, s := range ss {
			tx[i] = math.Log1p(float64(s.InputBytes))
			ty[i] = math.Log(float64(s.Latency))
		}
		if variance(tx) > 0 {
			a, b := stat.LinearRegression(tx, ty, nil, false)
			m.perTool[tool] = [2]float64{a, b}
		} else {
			m.perTool[tool] = [2]float64{stat.Mean(ty, nil), 0}
		}
	}
	return m
}

func variance(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return stat.Variance(xs, nil)
}

// Predict returns the predicted latency of a call; false when the model has
// seen no data at all.
func (m *LatencyModel) Predict(tool string, class, inputBytes int) (time.Duration, bool) {
	if m == nil {
		return 0, false
	}
	if c, ok := m.perTool[tool]; ok {
		return time.Duration(math.Exp(c[0] + c[1]*math.Log1p(float64(inputBytes)))), true
	}
	if m.hasGlobal {
		return time.Duration(math.Exp(m.global[0] + m.global[1]*float64(class))), true
	}
	return 0, false
}
