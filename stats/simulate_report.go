package stats

import (
	"cmp"
	"math"
)

// The calibration targets of issue 15 (DESIGN §11): A/A false positives at
// α = 5 % within ±0.75 points, each direction at α/2 within ±0.6 points;
// under daily peeking the sequential test at most α; simulated power within
// 0.03 of normal theory.
const (
	TargetFPRTolerance       = 0.0075
	TargetDirectionTolerance = 0.006
	TargetPowerTolerance     = 0.03
)

// ReportConfig is the calibration suite `lift stats simulate` prints.
type ReportConfig struct {
	Visitors, Runs int
	Conversion     float64
	// Days of daily looks in the peeking simulation.
	Days int
	// PowerLift is the planted relative conversion lift for the power row.
	PowerLift float64
	Method    RelativeMethod
	Level     float64
	Seed      uint64
	Workers   int `json:"-"`
}

// Report is the suite's outcome. AA holds one row per metric: conversion,
// then revenue per visitor and average order value at σ = 1 and σ = 2, each
// raw and winsorized at DefaultWinsorPercentile (the product default).
type Report struct {
	Config ReportConfig       `json:"config"`
	AA     []SimulationResult `json:"aa"`
	// Peeking is the A/A conversion test looked at daily.
	Peeking PeekingResult `json:"peeking"`
	// Power is the conversion test at the planted lift; NormalPower what
	// normal theory expects of it.
	Power       SimulationResult `json:"power"`
	NormalPower float64          `json:"normal_power"`
	// PeekingPower is the daily-peeked test at the planted lift: what the
	// sequential test's safety costs in power.
	PeekingPower PeekingResult `json:"peeking_power"`
}

// SimulateReport runs the calibration suite. Each row has its own seed
// (Seed + row), so rows are independent and every row is reproducible.
func SimulateReport(cfg ReportConfig) (Report, error) {
	cfg.Level = cmp.Or(cfg.Level, DefaultLevel)
	base := SimulationConfig{Visitors: cfg.Visitors, Runs: cfg.Runs, Conversion: cfg.Conversion,
		Method: cfg.Method, Level: cfg.Level, Workers: cfg.Workers}
	rows := []SimulationConfig{{Kind: KindProportion}}
	for _, kind := range []MetricKind{KindMean, KindRatio} {
		for _, sigma := range []float64{1, 2} {
			for _, w := range []float64{0, DefaultWinsorPercentile} {
				rows = append(rows, SimulationConfig{Kind: kind, Sigma: sigma, Winsorize: w})
			}
		}
	}
	r := Report{Config: cfg}
	for i, row := range rows {
		c := base
		c.Kind, c.Sigma, c.Winsorize, c.Seed = row.Kind, row.Sigma, row.Winsorize, cfg.Seed+uint64(i)
		res, err := Simulate(c)
		if err != nil {
			return Report{}, err
		}
		r.AA = append(r.AA, res)
	}
	var err error
	r.Peeking, err = SimulatePeeking(PeekingConfig{Visitors: cfg.Visitors, Days: cfg.Days, Runs: cfg.Runs,
		Conversion: cfg.Conversion, Level: cfg.Level, Seed: cfg.Seed + 100, Workers: cfg.Workers})
	if err != nil {
		return Report{}, err
	}
	power := base
	power.Kind, power.Lift, power.Seed = KindProportion, cfg.PowerLift, cfg.Seed+200
	if r.Power, err = Simulate(power); err != nil {
		return Report{}, err
	}
	r.NormalPower = NormalPower(cfg.Conversion, cfg.PowerLift, cfg.Visitors, cfg.Level)
	r.PeekingPower, err = SimulatePeeking(PeekingConfig{Visitors: cfg.Visitors, Days: cfg.Days, Runs: cfg.Runs,
		Conversion: cfg.Conversion, Lift: cfg.PowerLift, Level: cfg.Level, Seed: cfg.Seed + 300, Workers: cfg.Workers})
	if err != nil {
		return Report{}, err
	}
	return r, nil
}

// FPRWithinTarget reports whether an A/A row meets both targets at level:
// the overall rate within TargetFPRTolerance of α and each direction within
// TargetDirectionTolerance of α/2.
func (r SimulationResult) FPRWithinTarget() bool {
	alpha := 1 - r.Config.Level
	return near(r.Significant.Rate, alpha, TargetFPRTolerance) &&
		near(r.Losses.Rate, alpha/2, TargetDirectionTolerance) &&
		near(r.Wins.Rate, alpha/2, TargetDirectionTolerance)
}

// PowerWithinTarget reports whether the simulated power (significant in
// either direction) is within TargetPowerTolerance of normal theory.
func (r Report) PowerWithinTarget() bool {
	return near(r.Power.Significant.Rate, r.NormalPower, TargetPowerTolerance)
}

// near allows for the rounding of rates read off counts.
func near(v, want, tol float64) bool { return math.Abs(v-want) <= tol+1e-12 }
